import AsyncHTTPClient
import NIOCore

/// The one HTTP client of the cluster's calls (etcd, and a follower's to its leader), as long
/// as the process lives; redirects are never followed.
enum ClusterHTTP {
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout.connect = .seconds(1)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}
