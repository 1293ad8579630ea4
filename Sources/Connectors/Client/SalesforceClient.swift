import Foundation
import JSON

/// The org client: authenticates with any of the OAuth flows, keeps a bounded number of requests
/// in flight, retries what may be retried with backoff and jitter, re-authenticates once when the
/// session expires, and counts every attempt for the report.
///
/// Secrets (passwords, tokens, keys) never appear in its errors.
public final class SalesforceClient: OrgClient {
    public let settings: OrgConnectionSettings
    let transport: any HTTPTransport
    let session: SessionState
    let limiter: ConcurrencyLimiter
    let describeCache = DescribeCache()
    public let clock: WallClock

    /// A client for `settings`; `transport` defaults to async-http-client, `clock` to this
    /// machine's (tests move one forward).
    public init(settings: OrgConnectionSettings, transport: (any HTTPTransport)? = nil, clock: WallClock = .system) throws(OrgClientError) {
        if let instanceURL = settings.instanceURL { try OrgConnectionSettings.checkSecure(instanceURL) }
        try OrgConnectionSettings.checkSecure(settings.loginURL)
        if case .accessToken = settings.auth, settings.instanceURL == nil {
            throw .invalidConfiguration("the access_token flow needs an instance URL")
        }
        self.settings = settings
        self.clock = clock
        self.transport = transport ?? AsyncHTTPClientTransport(maxConnections: settings.maxInFlight)
        session = SessionState(instanceURL: settings.instanceURL)
        limiter = ConcurrencyLimiter(limit: settings.maxInFlight)
    }

    /// The path prefix of the REST API, e.g. `/services/data/v62.0`.
    public var apiPath: String { "/services/data/v\(settings.apiVersion)" }

    public var instanceURL: String {
        get async throws {
            try await currentToken().instanceURL
        }
    }

    public func usage() async -> APIUsage {
        await session.usage
    }

    /// The org's clock against ours, from its answers' `Date` headers; before any answer, one
    /// `GET /services/data` (the versions list, outside the API limits) asks for it — unless
    /// asked from inside a request's attempt (``RequestAttempts``), which holds a connection slot.
    public func serverClockOffset() async -> Int64 {
        if RequestAttempts.current == nil {
            await session.learnServerClock { _ = try? await self.send(OrgRequest(method: "GET", path: "/services/data", kind: "versions")) }
        }
        return await session.clockOffset
    }

    public var writeSettlingSeconds: Double { settings.timeoutSeconds + settings.requestDeadlineSeconds }

    public var writesSettledBefore: Int64? { settings.orgStartedAt.map { Int64($0.timeIntervalSince1970 * 1000) } }

    /// Releases the client's connections.
    public func shutdown() async {
        await transport.shutdown()
    }

    public func send(_ request: OrgRequest) async throws -> OrgResponse {
        try await limiter.run { try await self.sendNow(request) }
    }

    /// Connects now (the first request would otherwise), so bad credentials show up early.
    public func connect() async throws {
        _ = try await currentToken()
    }

    private func currentToken() async throws -> SessionState.Token {
        if let token = await session.token { return token }
        return try await session.refresh(after: 0) { try await self.authenticate() }
    }

    /// The longest path and query string an org accepts (16 KiB); longer ones are refused.
    static let maxRequestTarget = 16_384

    private func sendNow(_ request: OrgRequest) async throws -> OrgResponse {
        var attempt = 0
        var reauthenticated = false
        /// An earlier attempt may have been applied without its answer reaching us.
        var answerLost = false
        while true {
            attempt += 1
            let token = try await currentToken()
            var headers = request.headers + [("Authorization", "Bearer \(token.accessToken)"), ("Accept", "application/json")]
            for (name, value) in settings.headers { headers.append((name, value)) }
            let url = token.instanceURL + request.path + Self.queryString(request.query)
            let target = request.path.utf8.count + Self.queryString(request.query).utf8.count
            if target > Self.maxRequestTarget {
                // An org refuses such a request with an empty answer; say why before sending it.
                let what = request.query.contains { $0.0 == "q" } ? "the SOQL query" : "\(request.method) \(request.path)"
                throw OrgAPIError(status: 414, errorCode: "URI_TOO_LONG",
                                  message: "\(what) is \(target) characters long once URL-encoded; an org accepts at most \(Self.maxRequestTarget) in a URL (narrow the WHERE clause, or split a long IN list)")
            }
            await session.count(kind: request.kind, retry: attempt > 1)
            if let attempts = RequestAttempts.current { try await attempts.beforeSend() }
            let response: OrgResponse
            let leftAt = clock.now()
            do {
                response = try await transport.execute(method: request.method, url: url, headers: headers, body: request.body,
                                                       timeoutSeconds: settings.timeoutSeconds)
            } catch let error as TransportError {
                if error.mayHaveBeenSent && !request.idempotent {
                    throw OrgClientError.uncertain("\(request.method) \(request.path): \(error.message)")
                }
                if error.mayHaveBeenSent { answerLost = true }
                if attempt >= settings.retry.maxAttempts { throw OrgClientError.gaveUp(attempts: attempt, last: error.message, answerLost: answerLost) }
                try await Task.sleep(for: .seconds(settings.retry.delay(afterAttempt: attempt)))
                continue
            }
            if let limitInfo = response.headers["sforce-limit-info"] { await session.setLimitInfo(limitInfo) }
            if let date = response.headers["date"].flatMap(HTTPDate.parse) {
                await session.observeServerTime(date, sentAt: leftAt, receivedAt: clock.now())
            }
            if response.status < 300 { return response }
            let body = (try? response.json()) ?? .null
            let error = OrgAPIError(status: response.status, body: body,
                                    fallback: body == .null ? "HTTP \(response.status) with no error in the answer (\(request.method) \(request.path))" : "HTTP \(response.status)")
            if response.status == 401 && !reauthenticated && error.errorCode == "INVALID_SESSION_ID" {
                reauthenticated = true
                _ = try await session.refresh(after: token.generation) { try await self.authenticate() }
                attempt -= 1
                continue
            }
            if answerLost && request.method == "DELETE" && error.errorCode == "ENTITY_IS_DELETED" {
                // The lost attempt deleted it: the delete succeeded.
                return OrgResponse(status: 204, headers: response.headers, body: [])
            }
            if error.errorCode == "REQUEST_LIMIT_EXCEEDED" {
                throw OrgClientError.requestLimitExceeded(error.message)
            }
            let retryable = response.status >= 500 || RetryPolicy.retryableCodes.contains(error.errorCode)
            guard retryable, attempt < settings.retry.maxAttempts else {
                if retryable { throw OrgClientError.gaveUp(attempts: attempt, last: error.description, answerLost: answerLost) }
                throw error
            }
            try await Task.sleep(for: .seconds(settings.retry.delay(afterAttempt: attempt)))
        }
    }

    static func queryString(_ items: [(String, String)]) -> String {
        guard !items.isEmpty else { return "" }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;,/?#")
        return "?" + items.map { key, value in
            (key.addingPercentEncoding(withAllowedCharacters: allowed) ?? key) + "=" + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)
        }.joined(separator: "&")
    }

    // MARK: Authentication

    /// Runs the configured OAuth flow and returns a fresh token.
    func authenticate() async throws -> (accessToken: String, instanceURL: String) {
        switch settings.auth {
        case .accessToken(let accessToken):
            return (accessToken, settings.instanceURL!)
        case .password(let username, let password, let securityToken, let clientId, let clientSecret):
            var form = [("grant_type", "password"), ("client_id", clientId), ("username", username),
                        ("password", password + (securityToken ?? ""))]
            if let clientSecret { form.append(("client_secret", clientSecret)) }
            return try await tokenRequest(form, loginURL: settings.loginURL)
        case .refreshToken(let refreshToken, let clientId, let clientSecret):
            var form = [("grant_type", "refresh_token"), ("client_id", clientId), ("refresh_token", refreshToken)]
            if let clientSecret { form.append(("client_secret", clientSecret)) }
            return try await tokenRequest(form, loginURL: settings.loginURL)
        case .clientCredentials(let clientId, let clientSecret):
            return try await tokenRequest([("grant_type", "client_credentials"), ("client_id", clientId), ("client_secret", clientSecret)],
                                          loginURL: settings.instanceURL ?? settings.loginURL)
        case .jwt(let clientId, let username, let privateKeyFile):
            let assertion = try JWTAssertion.make(clientId: clientId, username: username, audience: Self.jwtAudience(settings.loginURL),
                                                  privateKeyFile: privateKeyFile)
            return try await tokenRequest([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)],
                                          loginURL: settings.loginURL)
        case .sfdxAuthURL(let text):
            let parsed = try SFDXAuthURL(text)
            var form = [("grant_type", "refresh_token"), ("client_id", parsed.clientId), ("refresh_token", parsed.refreshToken)]
            if let secret = parsed.clientSecret { form.append(("client_secret", secret)) }
            return try await tokenRequest(form, loginURL: parsed.loginURL)
        }
    }

    /// The `aud` of a JWT assertion: Salesforce accepts login.salesforce.com for production and My
    /// Domain logins, test.salesforce.com for sandboxes, and the site URL for Experience Cloud sites.
    public static func jwtAudience(_ loginURL: String) -> String {
        let host = URLComponents(string: loginURL)?.host?.lowercased() ?? ""
        if host.hasSuffix(".sandbox.my.salesforce.com") || host == "test.salesforce.com" { return "https://test.salesforce.com" }
        if host.hasSuffix(".my.salesforce.com") || host == "login.salesforce.com" { return "https://login.salesforce.com" }
        return loginURL
    }

    private func tokenRequest(_ form: [(String, String)], loginURL: String) async throws -> (accessToken: String, instanceURL: String) {
        try OrgConnectionSettings.checkSecure(loginURL)
        let body = Array(Self.queryString(form).dropFirst().utf8)
        // Asking for a token again is harmless: lost connections and 5xx answers are retried like
        // any idempotent request.
        var attempt = 0
        var response: OrgResponse
        while true {
            attempt += 1
            await session.count(kind: "auth", retry: attempt > 1)
            do {
                response = try await transport.execute(
                    method: "POST", url: loginURL + "/services/oauth2/token",
                    headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")], body: body,
                    timeoutSeconds: settings.timeoutSeconds)
            } catch let error as TransportError {
                guard attempt < settings.retry.maxAttempts else {
                    throw OrgClientError.authenticationFailed("cannot reach \(loginURL): \(error.message)")
                }
                try await Task.sleep(for: .seconds(settings.retry.delay(afterAttempt: attempt)))
                continue
            }
            guard response.status >= 500, attempt < settings.retry.maxAttempts else { break }
            try await Task.sleep(for: .seconds(settings.retry.delay(afterAttempt: attempt)))
        }
        let json = (try? response.json()) ?? .null
        guard response.status == 200, let accessToken = json["access_token"]?.stringValue else {
            let code = json["error"]?.stringValue ?? "HTTP \(response.status)"
            let description = json["error_description"]?.stringValue ?? json[0]?["message"]?.stringValue ?? "no description"
            throw OrgClientError.authenticationFailed("\(loginURL) answered \(code): \(description)")
        }
        let instance = json["instance_url"]?.stringValue.map(OrgConnectionSettings.trimmed) ?? settings.instanceURL ?? loginURL
        try OrgConnectionSettings.checkSecure(instance)
        return (accessToken, instance)
    }
}

/// The current access token and the request counts, shared by concurrent requests.
actor SessionState {
    struct Token: Sendable {
        var accessToken: String
        var instanceURL: String
        /// Increases with each new token, so concurrent 401s re-authenticate only once.
        var generation: Int
    }

    private(set) var token: Token?
    private(set) var usage = APIUsage()
    private var pending: Task<Token, Error>?
    private var generation = 0
    let configuredInstanceURL: String?

    init(instanceURL: String?) {
        configuredInstanceURL = instanceURL
    }

    /// A new token unless one newer than `generation` already exists (or is being fetched).
    func refresh(after generation: Int, _ authenticate: @escaping @Sendable () async throws -> (accessToken: String, instanceURL: String))
        async throws -> Token
    {
        if let token, token.generation > generation { return token }
        if let pending { return try await adopt(pending) }
        let next = self.generation + 1
        let task = Task { () throws -> Token in
            let (accessToken, instanceURL) = try await authenticate()
            return Token(accessToken: accessToken, instanceURL: instanceURL, generation: next)
        }
        pending = task
        return try await adopt(task)
    }

    /// Waits for a token fetch and stores its token. Every waiter stores it, not only the caller
    /// that started the fetch: whichever resumes first must not go on with the old token.
    private func adopt(_ task: Task<Token, Error>) async throws -> Token {
        let fresh: Token
        do {
            fresh = try await task.value
        } catch {
            if pending == task { pending = nil }
            throw error
        }
        if pending == task { pending = nil }
        if fresh.generation > self.generation {
            self.generation = fresh.generation
            token = fresh
        }
        return token ?? fresh
    }

    func count(kind: String, retry: Bool) {
        usage.requests += 1
        usage.byKind[kind, default: 0] += 1
        if retry { usage.retries += 1 }
    }

    func setLimitInfo(_ info: String) {
        usage.limitInfo = info
    }

    private var serverClock = ServerClockEstimate()

    /// How far the org's clock is ahead of ours, in milliseconds.
    var clockOffset: Int64 { serverClock.offset }
    /// The one request under way that asks for the org's clock: concurrent writers wait for it
    /// rather than each sending their own.
    private var clockProbe: Task<Void, Never>?

    /// Runs `probe` unless the org's clock is known, or joins the probe already under way.
    func learnServerClock(_ probe: @escaping @Sendable () async -> Void) async {
        guard !serverClock.isKnown else { return }
        if let clockProbe { return await clockProbe.value }
        let task = Task { await probe() }
        clockProbe = task
        await task.value
        clockProbe = nil
    }

    func observeServerTime(_ serverTime: Date, sentAt: Int64, receivedAt: Int64) {
        serverClock.observe(date: ServerClockEstimate.milliseconds(serverTime), sentAt: sentAt, receivedAt: receivedAt)
    }
}
