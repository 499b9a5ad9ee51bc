import HearthAuth
import HearthHTTP

/// The validated configuration in the HTTP adapter's terms: who may call, how long a request may
/// take, how many connections and bytes are served at once.
extension ServerConfiguration {
    var access: APIAccess {
        var access = APIAccess(
            profile: profile, defaultProject: projects.defaultProject, apiKeys: projects.apiKeys,
            adminTokens: secrets.adminCredentials, trustedProxies: listen.trustedProxies,
            ownerFromBrowsers: listen.developmentBrowserAdmin)
        access.logClientAddresses = observability.logClientAddresses
        access.console = listen.console
        return access
    }

    var requestTimeLimit: RequestTimeLimit {
        RequestTimeLimit(
            base: .seconds(limits.requestTimeoutSeconds), minBytesPerSecond: limits.requestMinBytesPerSecond,
            maximum: .seconds(limits.requestTimeoutMaxSeconds))
    }

    /// The connection and buffered-bytes limits, under the connection cap `hearth serve` derived.
    func connectionLimits(maxConnections: Int) -> ConnectionGovernor.Limits {
        ConnectionGovernor.Limits(
            maxConnections: maxConnections, perAddress: limits.maxConnectionsPerAddress,
            bufferedBytes: limits.maxBufferedRequestBytes, headTimeout: .seconds(limits.requestHeadTimeoutSeconds),
            trustedProxies: listen.trustedProxies)
    }
}
