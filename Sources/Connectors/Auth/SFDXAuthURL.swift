import Foundation

/// The `force://clientId:clientSecret:refreshToken@host` URL that `sf org display --verbose` prints.
struct SFDXAuthURL: Sendable, Equatable {
    var clientId: String
    var clientSecret: String?
    var refreshToken: String
    /// `https://host`.
    var loginURL: String

    /// Parses the URL; the error never repeats it (it holds a refresh token).
    init(_ text: String) throws(OrgClientError) {
        guard text.hasPrefix("force://"), let at = text.lastIndex(of: "@") else {
            throw .invalidConfiguration("the sfdx auth URL must look like force://clientId:clientSecret:refreshToken@host")
        }
        let credentials = text[text.index(text.startIndex, offsetBy: 8)..<at].split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        let host = String(text[text.index(after: at)...])
        guard credentials.count == 3, !credentials[0].isEmpty, !credentials[2].isEmpty, !host.isEmpty else {
            throw .invalidConfiguration("the sfdx auth URL must look like force://clientId:clientSecret:refreshToken@host")
        }
        clientId = String(credentials[0])
        clientSecret = credentials[1].isEmpty ? nil : String(credentials[1])
        refreshToken = String(credentials[2])
        if host.lowercased().hasPrefix("http://") || host.lowercased().hasPrefix("https://") {
            loginURL = host
        } else {
            // `host` or `host:port`; plain http only for this machine (checked on the parsed host).
            let name = URLComponents(string: "https://" + host)?.host ?? host
            loginURL = (LoopbackHost.contains(name) ? "http://" : "https://") + host
        }
    }
}
