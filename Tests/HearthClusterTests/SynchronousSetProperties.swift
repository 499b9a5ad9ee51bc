import HearthStore
import PropertyBased
import Testing

@testable import HearthCluster

/// The synchronous set's promise, checked over random runs of a leader and its followers:
/// writes, followers receiving and confirming at their own pace, dying and coming back, time
/// passing, and the elector's ticks (some of whose etcd writes fail). At every moment, every
/// follower etcd names holds every write the leader acknowledged, so any node that may take
/// over holds them all.
@Suite("cluster: the synchronous set names only followers that hold every acknowledged write")
struct SynchronousSetProperties {
    static let base = ContinuousClock.now
    static let followers = ["b", "c", "d"]

    struct Follower {
        var held: UInt64 = 0
        var alive = true
    }

    @Test("whatever the order of events, etcd's followers hold every acknowledged write")
    func acknowledgedWritesAreHeld() async {
        await propertyCheck(count: 400, input: Gen.int(in: 0...1_000_000).array(of: 1...300)) { numbers in
            let configured = numbers.first.map { $0 % 2 + 1 } ?? 1
            let count = numbers.count > 1 ? numbers[1] % 3 + 1 : 1
            let names = Array(Self.followers.prefix(count))
            // A first leader: no follower yet, so it acknowledges alone until one joins.
            var recorded = SynchronousSet.starting(term: 1, leader: "a", after: nil, configured: configured)
            var keeper = SynchronousSetKeeper(recorded, catchUpLimit: .seconds(3))
            let commit = SynchronousCommit()
            commit.require(recorded.requirement)
            var followers = Dictionary(uniqueKeysWithValues: names.map { ($0, Follower()) })
            var head: UInt64 = 0
            var waiting: [UInt64] = []
            var acknowledged: UInt64 = 0
            var now = 0
            for number in numbers.dropFirst(2) {
                let name = names[number / 7 % names.count]
                switch number % 7 {
                case 0, 1:
                    head += 1
                    waiting.append(head)
                case 2:
                    if followers[name]!.alive {
                        followers[name]!.held = max(followers[name]!.held, UInt64(number / 49) % (head + 1))
                    }
                case 3:
                    if followers[name]!.alive {
                        commit.confirm(name, through: followers[name]!.held, at: Self.base + .milliseconds(now))
                    }
                case 4: followers[name]!.alive.toggle()
                case 5: now += number / 49 % 2_000
                default:
                    let step = keeper.step(
                        confirmations: commit.confirmations, head: head, now: Self.base + .milliseconds(now), configured: configured,
                        live: .seconds(3), slack: 5)
                    switch step {
                    case .none: break
                    case .widen(let requirement):
                        commit.require(requirement)
                        keeper.widened(head: head)
                    case .narrow(let requirement): commit.require(requirement)
                    case .record(let set):
                        let succeeded = number / 49 % 5 != 0
                        if succeeded { recorded = set }
                        commit.require(keeper.recorded(succeeded))
                    }
                }
                waiting.removeAll { sequence in
                    guard commit.isConfirmed(sequence) else { return false }
                    acknowledged = max(acknowledged, sequence)
                    return true
                }
                for follower in recorded.followers {
                    #expect(
                        followers[follower]!.held >= acknowledged,
                        "\(follower) may take over holding \(followers[follower]!.held), but \(acknowledged) was acknowledged")
                }
            }
        }
    }

    @Test("the set: who may take over, its encoding, the followers it wants")
    func setRules() {
        let set = SynchronousSet(leader: "a", term: 9, followers: ["c", "b"], required: 1, asynchronous: false)
        #expect(set.followers == ["b", "c"])
        #expect(set.mayLead("a") && set.mayLead("b") && !set.mayLead("d"))
        #expect(SynchronousSet(set.encoded) == set)
        #expect(SynchronousSet(Array("{\"leader\":\"a\"}".utf8)) == nil)
        #expect(set.requirement == .followers(["b", "c"], atLeast: 1))
        let asynchronous = SynchronousSet.starting(term: 2, leader: "a", after: set, configured: 0)
        #expect(asynchronous.mayLead("d") && asynchronous.requirement == .none)
        // A new term carries the requirement over, with no followers yet: nothing acknowledged.
        let next = SynchronousSet.starting(term: 10, leader: "b", after: set, configured: 1)
        #expect(next.required == 1 && next.followers.isEmpty && next.requirement == .followers([], atLeast: 1))
        #expect(!next.mayLead("a") && next.mayLead("b"))

        let now = Self.base + .seconds(100)
        let confirmations: [String: SynchronousCommit.Confirmation] = [
            "b": .init(sequence: 90, at: now - .seconds(10)),  // gone quiet
            "c": .init(sequence: 99, at: now), "d": .init(sequence: 100, at: now), "e": .init(sequence: 10, at: now),
        ]
        let b = SynchronousSet(leader: "a", term: 9, followers: ["b"], required: 1, asynchronous: false)
        // b stopped confirming: the most caught-up live follower replaces it; e is too far behind.
        #expect(b.wanted(configured: 1, confirmations: confirmations, head: 100, now: now, live: .seconds(3), slack: 5) == ["d"])
        #expect(b.wanted(configured: 2, confirmations: confirmations, head: 100, now: now, live: .seconds(3), slack: 5) == ["c", "d"])
        // No one to take its place: b stays (it may still come back holding everything).
        #expect(
            b.wanted(configured: 1, confirmations: ["b": confirmations["b"]!], head: 100, now: now, live: .seconds(3), slack: 5) == ["b"])
        #expect(b.with(followers: ["c", "d"], configured: 2).required == 2)
    }
}
