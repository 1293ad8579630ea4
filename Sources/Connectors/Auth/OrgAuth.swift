/// Credentials for one OAuth flow. In pipeline files, secret values come only from `${VAR}`s.
public enum OrgAuth: Sendable, Equatable {
    case password(username: String, password: String, securityToken: String?, clientId: String, clientSecret: String?)
    case refreshToken(refreshToken: String, clientId: String, clientSecret: String?)
    case clientCredentials(clientId: String, clientSecret: String)
    case jwt(clientId: String, username: String, privateKeyFile: String)
    case accessToken(accessToken: String)
    case sfdxAuthURL(authUrl: String)

    /// The flow names accepted in `auth.flow`.
    public static let flowNames = ["password", "refresh_token", "client_credentials", "jwt", "access_token", "sfdx_auth_url"]

    /// The keys that hold secrets; each must be exactly one `${VAR}`.
    public static let secretKeys: Set<String> = [
        "password", "securityToken", "clientSecret", "refreshToken", "accessToken", "authUrl",
    ]
}

/// Printing credentials (a log line, a failed test's message, `dump`) never shows a secret.
extension OrgAuth: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The flow and its non-secret values; secrets read `<redacted>`.
    public var description: String {
        func secret(_ value: String?) -> String { value == nil ? "nil" : "<redacted>" }
        switch self {
        case .password(let username, _, let securityToken, let clientId, let clientSecret):
            return "password(username: \(username), password: <redacted>, securityToken: \(secret(securityToken)), clientId: \(clientId), "
                + "clientSecret: \(secret(clientSecret)))"
        case .refreshToken(_, let clientId, let clientSecret):
            return "refresh_token(refreshToken: <redacted>, clientId: \(clientId), clientSecret: \(secret(clientSecret)))"
        case .clientCredentials(let clientId, _):
            return "client_credentials(clientId: \(clientId), clientSecret: <redacted>)"
        case .jwt(let clientId, let username, let privateKeyFile):
            return "jwt(clientId: \(clientId), username: \(username), privateKeyFile: \(privateKeyFile))"
        case .accessToken:
            return "access_token(accessToken: <redacted>)"
        case .sfdxAuthURL:
            return "sfdx_auth_url(authUrl: <redacted>)"
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["flow": description], displayStyle: .enum) }
}
