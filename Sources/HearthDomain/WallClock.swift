/// Time, injected: Unix milliseconds. Tests move a manual clock instead of sleeping.
public protocol WallClock: Sendable {
    func now() -> Int64
}
