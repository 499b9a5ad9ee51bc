import HearthAuth
import HearthDomain
import Hummingbird
import NIOCore

/// The context Hearth serves requests with: Hummingbird's basic context plus the peer's
/// address, which the metadata of every event a request causes records.
public struct HearthRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

extension RemoteAddressRequestContext {
    /// The peer's IP address, when the transport has one (not for in-process test requests).
    var clientIp: String? {
        remoteAddress?.ipAddress
    }

    /// The caller of a development page (the emulator's routes): the TCP peer is the client.
    /// The API resolves callers through `APIAccess`, which knows the trusted proxies.
    func developmentCaller(project: ProjectID, isAdmin: Bool) -> Caller {
        Caller(project: project, isAdmin: isAdmin, requestId: id, clientIp: clientIp)
    }
}
