import HearthDomain
import HearthWire

/// What a session proved by a second factor carries in its ID tokens' `firebase` claim, as
/// Firebase issues it, and keeps across refreshes (its refresh token records the claim).
enum SecondFactorClaims {
    static let factorKey = "sign_in_second_factor"
    static let identifierKey = "second_factor_identifier"

    static func claims(of factor: SecondFactor) -> JSONValue {
        [factorKey: .string(factor.kind.rawValue), identifierKey: .string(factor.enrollmentId)]
    }
}
