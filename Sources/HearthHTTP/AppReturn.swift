import Foundation
import HearthWire

/// Where a mobile SDK waits for a headful sign-in's result, and the link that hands it over.
enum AppReturn: Equatable {
    /// iOS: the URL scheme the SDK registered (reversed client id, or `app-<appId>`).
    case ios(scheme: String, firebaseHost: Bool)
    /// Android: the app's package.
    case android(package: String)

    /// `nil` without an app, or when the scheme or package it names could be anything but
    /// an app's (a `javascript` scheme, a system handler's, characters that break out of the
    /// intent).
    init?(_ query: [String: String]) {
        if let package = query["apn"], !package.isEmpty {
            guard package.utf8.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") })
            else { return nil }
            self = .android(package: package)
        } else if let bundle = query["ibi"], !bundle.isEmpty {
            let scheme: String
            var firebaseHost = true
            if let clientId = query["clientId"], !clientId.isEmpty {
                scheme = clientId.split(separator: ".", omittingEmptySubsequences: false).reversed().joined(separator: ".")
            } else if let appId = query["appId"], !appId.isEmpty {
                guard Self.isFirebaseAppId(appId) else { return nil }
                scheme = "app-" + appId.replacingOccurrences(of: ":", with: "-")
            } else {
                scheme = bundle
                firebaseHost = false
            }
            guard Self.isAppScheme(scheme) else { return nil }
            self = .ios(scheme: scheme, firebaseHost: firebaseHost)
        } else {
            return nil
        }
    }

    /// An app's own URL scheme as the iOS SDK registers it: RFC 3986's scheme characters, and
    /// either reverse-DNS (a reversed client id, a bundle id: two labels at least) or Firebase's
    /// `app-<app id>`. A single word is where the system's and other apps' handlers live
    /// (`ms-msdt`, `itms-services`, `intent`, `tel`, `javascript`), and Apple's own names are
    /// not an app's either.
    static func isAppScheme(_ scheme: String) -> Bool {
        guard let first = scheme.utf8.first, Self.isAlphanumeric(first), first > UInt8(ascii: "9"),
            scheme.utf8.allSatisfy({ Self.isAlphanumeric($0) || "+-.".utf8.contains($0) })
        else { return false }
        let lower = scheme.lowercased()
        let labels = lower.split(separator: ".", omittingEmptySubsequences: false)
        let firebaseAppScheme = lower.hasPrefix("app-1-") && labels.count == 1
        guard firebaseAppScheme || (labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }) else { return false }
        return !["com.apple.", "x-apple", "apple"].contains { lower.hasPrefix($0) }
    }

    /// Firebase's app id: `1:<project number>:ios:<hex>`.
    static func isFirebaseAppId(_ appId: String) -> Bool {
        let parts = appId.split(separator: ":", omittingEmptySubsequences: false)
        let digits = Set("0123456789".utf8)
        return parts.count == 4 && parts[0] == "1" && !parts[1].isEmpty && parts[1].utf8.allSatisfy(digits.contains)
            && parts[2] == "ios" && !parts[3].isEmpty && parts[3].utf8.allSatisfy(Self.isAlphanumeric)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    enum Result {
        /// The response URL `signInWithIdp` reads (`requestUri`).
        case response(String)
        /// `{code, message}`: the SDK reports it as the sign-in's error.
        case error(code: String, message: String)
    }

    /// The deep link (iOS) or intent (Android) that hands the result to the SDK.
    func link(_ result: Result, authType: String, eventId: String?, origin: String) -> String {
        let carried: (name: String, value: String) =
            switch result {
            case .response(let url): ("link", url)
            case .error(let code, let message):
                ("firebaseError", JSONValue.object(["code": .string(code), "message": .string(message)]).text)
            }
        switch self {
        case .ios(let scheme, let firebaseHost):
            // Only the callback URL's query matters to the SDK; nothing fetches the page.
            var callback = "\(origin)/__/auth/callback?authType=\(encoded(authType))&\(carried.name)=\(encoded(carried.value))"
            if let eventId { callback += "&eventId=\(encoded(eventId))" }
            return "\(scheme)://\(firebaseHost ? "firebaseauth" : "google")/link?deep_link_id=\(encoded(callback))"
        case .android(let package):
            var intent = "intent://firebase.auth/#Intent;scheme=genericidp;package=\(package);S.authType=\(encoded(authType));"
            if let eventId { intent += "S.eventId=\(encoded(eventId));" }
            return intent + "S.\(carried.name)=\(encoded(carried.value));B.encryptionEnabled=false;end;"
        }
    }

    /// The query parameters that name the app, kept with a pending sign-in.
    static func parameters(_ query: [String: String]) -> [String: String] {
        query.filter { ["ibi", "clientId", "appId", "apn"].contains($0.key) }
    }
}

private func encoded(_ text: String) -> String {
    FormEncoding.percentEncoded(text)
}
