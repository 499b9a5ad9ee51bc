import HearthAuth
import HearthDomain
import HearthWire
import Hummingbird

/// Hearth's own admin routes for the 30-day anonymous auto-cleanup (no Firebase API has them):
/// `GET /hearth/v1/projects/{p}/cleanup` (status) and `.../cleanup/preview` (what turning it on
/// would schedule). Admin only; the answers are counts, bounded by the schedule's size.
public struct CleanupAPI: Sendable {
    let service: AuthService
    let access: APIAccess

    func status(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        JSONResponse.ok(Self.json(try await service.cleanupStatus(try admin(request, context))))
    }

    func preview(_ request: Request, _ context: some RemoteAddressRequestContext) async throws -> Response {
        JSONResponse.ok(Self.json(try await service.cleanupPreview(try admin(request, context))))
    }

    private func admin(_ request: Request, _ context: some RemoteAddressRequestContext) throws -> Caller {
        let project = context.parameters.get("project").map { Substring($0) }
        let caller = try access.resolve(request, context, query: QueryString(request), pathProject: project).caller
        guard caller.isAdmin else { throw FirebaseError.insufficientPermission }
        return caller
    }

    public static func json(_ status: CleanupStatus) -> JSONValue {
        var body: [String: JSONValue] = [
            "project": .string(status.project.rawValue), "enabled": .bool(status.enabled),
            "periodSeconds": .int(status.periodSeconds), "scheduled": .int(Int64(status.scheduled)),
            "dueNow": .int(Int64(status.dueNow)), "purgedLast30Days": .int(Int64(status.purgedLast30Days)),
            "purgedByDay": days(status.purgedByDay),
        ]
        if let next = status.nextDueAt { body["nextDueAt"] = .string(Timestamp.iso8601(milliseconds: next)) }
        return .object(body)
    }

    public static func json(_ preview: CleanupPreview) -> JSONValue {
        [
            "project": .string(preview.project.rawValue), "enabled": .bool(preview.enabled),
            "periodSeconds": .int(preview.periodSeconds), "wouldSchedule": .int(Int64(preview.wouldSchedule)),
            "alreadyScheduled": .int(Int64(preview.alreadyScheduled)), "dueByDay": days(preview.dueByDay),
        ]
    }

    private static func days(_ counts: [DayCount]) -> JSONValue {
        .array(
            counts.map { count in
                [
                    "day": .string(String(Timestamp.iso8601(milliseconds: count.day * DayCount.millisecondsPerDay).prefix(10))),
                    "accounts": .int(Int64(count.accounts)),
                ]
            })
    }
}
