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
