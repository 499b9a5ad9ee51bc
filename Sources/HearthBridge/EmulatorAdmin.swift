import Foundation
import NIOCore

/// For `hearth bridge` on a server: the Admin SDKs in emulator mode authenticate with
/// `Authorization: Bearer owner` whatever credential they were given, which production Hearth
/// refuses. With this set, the bridge replaces exactly that header with the operator's real
/// token, and serves only the local users allowed to use it: loopback is shared by every
/// process on the machine, so without `allowedUsers` any of them would be admin.
public struct EmulatorAdmin: Sendable, Equatable {
    public var token: String
    /// Uids whose connections may use the token (Linux: read from `/proc/self/net/tcp*`);
    /// connections of other users are refused whole. Empty: every local user.
    public var allowedUsers: Set<UInt32>

    public init(token: String, allowedUsers: Set<UInt32>) {
        self.token = token
        self.allowedUsers = allowedUsers
    }

    /// What the Admin SDKs send in emulator mode (the Auth Emulator's admin credential).
    static let emulatorCredential = "Bearer owner"
}

/// The uid that owns the other end of a loopback TCP connection, as the kernel lists it in
/// `/proc/self/net/tcp` (IPv4) or `tcp6`: the client's socket is the one whose local address is
/// the connection's remote one and whose remote address is ours. nil when it can not be told.
enum LoopbackPeer {
    static func owner(local: SocketAddress?, remote: SocketAddress?) -> UInt32? {
        guard let local, let remote, let localKey = key(local), let remoteKey = key(remote) else { return nil }
        let table = localKey.count > 13 ? "/proc/self/net/tcp6" : "/proc/self/net/tcp"
        // procfs reports a size of 0: read to the end rather than by the size.
        guard let file = FileHandle(forReadingAtPath: table) else { return nil }
        defer { try? file.close() }
        return owner(in: String(decoding: file.readDataToEndOfFile(), as: UTF8.self), client: remoteKey, server: localKey)
    }

    /// The uid column of the line whose addresses are `client` then `server`.
    static func owner(in table: String, client: String, server: String) -> UInt32? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, fields[1] == client, fields[2] == server else { continue }
            return UInt32(fields[7])
        }
        return nil
    }

    /// An address as the kernel prints it: each 32-bit word of the address in host (little
    /// endian) order, in hex, then the port in hex: `0100007F:2378` for 127.0.0.1:9080.
    static func key(_ address: SocketAddress) -> String? {
        guard let port = address.port, let bytes = address.ipAddressBytes else { return nil }
        var hex = ""
        for word in stride(from: 0, to: bytes.count, by: 4) {
            for byte in bytes[word..<word + 4].reversed() { hex += String(format: "%02X", byte) }
        }
        return hex + ":" + String(format: "%04X", port)
    }
}

extension SocketAddress {
    /// The address's bytes in network order (4 or 16), nil for a Unix socket.
    fileprivate var ipAddressBytes: [UInt8]? {
        switch self {
        case .v4(let address):
            return withUnsafeBytes(of: address.address.sin_addr) { Array($0) }
        case .v6(let address):
            return withUnsafeBytes(of: address.address.sin6_addr) { Array($0) }
        case .unixDomainSocket:
            return nil
        }
    }
}
