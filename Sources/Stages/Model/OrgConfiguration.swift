import JSON

/// How a pipeline reaches its org: the embedded emulator, or a real org with credentials.
public enum OrgConfiguration: Sendable, Equatable {
    /// An in-process emulator on a free loopback port. Paths are absolute.
    case emulator(EmulatorSettings)
    /// A real org (or an emulator started separately).
    case remote(RemoteOrgSettings)

    public struct EmulatorSettings: Sendable, Equatable {
        public var seed: String?
        /// `<store>.org.sqlite` unless given.
        public var database: String
        public var faults: String?
    }

    public struct RemoteOrgSettings: Sendable, Equatable {
        public var instanceUrl: String?
        public var loginUrl: String?
        public var apiVersion: String?
        public var maxInFlight: Int?
        public var timeoutSeconds: Double?
        public var headers: [String: String]
        public var auth: OrgAuth
    }
}

/// Credentials for one OAuth flow. Secret values come only from `${VAR}`s.
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
