import Foundation
import JSON

/// `/services/oauth2/token` (password, refresh_token, client_credentials, JWT bearer) and `userinfo`, with
/// Salesforce's error bodies (`{"error", "error_description"}`, HTTP 400).
extension OrgEngine {
    func handleOAuth(_ request: EmulatorRequest, parts: [String]) -> EmulatorResponse {
        switch (request.method, parts.first ?? "") {
        case ("POST", "token"): return token(request)
        case ("GET", "userinfo"):
            switch authenticate(request) {
            case .success(let username): return identity(username: username)
            case .failure(let error): return .error(error)
            }
        default: return .error(.notFound)
        }
    }

    private func oauthError(_ error: String, _ description: String) -> EmulatorResponse {
        .json(400, ["error": .string(error), "error_description": .string(description)])
    }

    func token(_ request: EmulatorRequest) -> EmulatorResponse {
        var form = Self.formFields(String(decoding: request.body, as: UTF8.self))
        for (key, value) in request.query where form[key] == nil { form[key] = value }
        if let basic = request.headers["authorization"], basic.hasPrefix("Basic "),
           let decoded = Data(base64Encoded: String(basic.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }),
           let colon = decoded.firstIndex(of: ":") {
            form["client_id"] = form["client_id"] ?? String(decoded[..<colon])
            form["client_secret"] = form["client_secret"] ?? String(decoded[decoded.index(after: colon)...])
        }
        let users = seed.users
        func clientUsers() -> [OrgUser]? {
            let matching = users.filter { $0.clientId == form["client_id"] }
            return matching.isEmpty ? nil : matching
        }
        switch form["grant_type"] ?? "" {
        case "password":
            guard let candidates = clientUsers() else { return oauthError("invalid_client_id", "client identifier invalid") }
            // Exactly the password, followed by the user's security token when it has one.
            guard let user = candidates.first(where: { $0.username == form["username"] }),
                  form["password"] == user.password + (user.securityToken ?? "")
            else { return oauthError("invalid_grant", "authentication failure") }
            if let secret = user.clientSecret, form["client_secret"] != nil, form["client_secret"] != secret {
                return oauthError("invalid_client", "invalid client credentials")
            }
            return issue(for: user, refresh: false)
        case "refresh_token":
            guard clientUsers() != nil else { return oauthError("invalid_client_id", "client identifier invalid") }
            guard let presented = form["refresh_token"],
                  let user = users.first(where: { $0.refreshToken == presented })
            else { return oauthError("invalid_grant", "expired access/refresh token") }
            return issue(for: user, refresh: false, scope: "refresh_token full")
        case "client_credentials":
            guard let candidates = clientUsers() else { return oauthError("invalid_client_id", "client identifier invalid") }
            guard let user = candidates.first(where: { $0.clientSecret != nil && $0.clientSecret == form["client_secret"] }) else {
                return oauthError("invalid_client", "invalid client credentials")
            }
            return issue(for: user, refresh: false, scope: "api")
        case "urn:ietf:params:oauth:grant-type:jwt-bearer":
            guard let assertion = form["assertion"] else { return oauthError("invalid_request", "assertion is required") }
            let verifier = JWTBearerVerifier(
                audiences: ["https://login.salesforce.com", "https://test.salesforce.com", instanceURL], now: clock.now() / 1000)
            switch verifier.verify(assertion, users: users) {
            case .success(let user): return issue(for: user, refresh: false, scope: "api")
            case .failure(let rejection): return oauthError("invalid_grant", rejection.description)
            }
        default:
            return oauthError("unsupported_grant_type", "grant type not supported")
        }
    }

    /// A new session token for `user`.
    func newSession(for user: OrgUser) -> String {
        sessions.issue(for: user.username, orgId: orgId)
    }

    private func issue(for user: OrgUser, refresh: Bool, scope: String? = nil) -> EmulatorResponse {
        let accessToken = newSession(for: user)
        var body = JSONObject()
        body["access_token"] = .string(accessToken)
        if let scope { body["scope"] = .string(scope) }
        body["instance_url"] = .string(instanceURL)
        body["id"] = .string("\(instanceURL)/id/\(orgId)/\(userId(for: user.username))")
        body["token_type"] = "Bearer"
        body["issued_at"] = .string(String(Int64(Date().timeIntervalSince1970 * 1000)))
        body["signature"] = .string(Data(Self.randomToken().prefix(32).utf8).base64EncodedString())
        return .json(200, .object(body))
    }

    func userId(for username: String) -> String {
        (try? read(in: nil) { db in
            try String.fetchOne(db, sql: "SELECT id FROM records WHERE type = 'User' AND json_extract(data, '$.Username') = ?", arguments: [username])
        }) ?? nil ?? orgId
    }

    /// The identity URL / userinfo document.
    func identity(username: String) -> EmulatorResponse {
        let user = userId(for: username)
        return .json(200, [
            "id": .string("\(instanceURL)/id/\(orgId)/\(user)"), "user_id": .string(user), "organization_id": .string(orgId),
            "username": .string(username), "preferred_username": .string(username), "email": .string(username),
            "urls": ["rest": .string("\(instanceURL)/services/data/v{version}/")],
        ])
    }

    static func formFields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if let key = parts.first { fields[key] = parts.count > 1 ? parts[1] : "" }
        }
        return fields
    }
}
