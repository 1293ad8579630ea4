/// The org's sessions: the access tokens it issued and whose each is, and the count of the
/// session-expiry fault (`sessionExpiryEvery`), which revokes the token that reaches it.
struct SessionRegistry: Sendable {
    /// Token → username.
    private var users: [String: String]
    private var usesSinceExpiry = 0

    /// Sessions holding the development token of `username`.
    init(developmentToken: String, username: String) {
        users = [developmentToken: username]
    }

    /// The user `token` was issued to, if it is valid.
    func user(of token: String) -> String? {
        users[token]
    }

    /// A new session for `username`: `<org id prefix>!<random>`, as an org's tokens look.
    mutating func issue(for username: String, orgId: String) -> String {
        let token = String(orgId.prefix(15)) + "!" + OrgEngine.randomToken()
        users[token] = username
        return token
    }

    /// The user of `token`, counting one use toward `expiryEvery` (0: sessions never expire):
    /// the use past it revokes the token and is refused.
    mutating func authenticate(_ token: String, expiryEvery: Int) -> String? {
        guard let user = users[token] else { return nil }
        guard expiryEvery > 0 else { return user }
        usesSinceExpiry += 1
        guard usesSinceExpiry > expiryEvery else { return user }
        users[token] = nil
        usesSinceExpiry = 0
        return nil
    }

    /// Starts the expiry count again (the faults changed).
    mutating func restartExpiryCount() {
        usesSinceExpiry = 0
    }
}
