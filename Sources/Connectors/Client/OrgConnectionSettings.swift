import Foundation

/// How to reach and authenticate to an org.
public struct OrgConnectionSettings: Sendable {
    /// The instance URL; the OAuth answer supplies it when absent (required with `access_token`).
    public var instanceURL: String?
    /// Where OAuth flows log in. Default `https://login.salesforce.com`.
    public var loginURL: String
    /// Default `62.0`.
    public var apiVersion: String
    /// Requests in flight at once. Default 8, well under an org's concurrent long-request limit.
    public var maxInFlight: Int
    public var timeoutSeconds: Double
    /// The longest the org may go on executing a request it received (Salesforce stops a
    /// synchronous request after 10 minutes). With ``timeoutSeconds`` it bounds how long a write
    /// whose answer was lost may still be applied. Default 600.
    public var requestDeadlineSeconds: Double
    /// When the org itself started, if the caller knows it (an emulator it started): a write sent
    /// before then can no longer be in progress.
    public var orgStartedAt: Date?
    /// Extra headers on every REST request (assignment-rule or duplicate-rule headers).
    public var headers: [String: String]
    public var auth: OrgAuth
    public var retry: RetryPolicy

    /// The defaults, in one place: a pipeline's `org` object falls back on them too.
    public static let defaultLoginURL = "https://login.salesforce.com"
    public static let defaultAPIVersion = "62.0"
    public static let defaultMaxInFlight = 8
    public static let defaultTimeoutSeconds: Double = 120
    public static let defaultRequestDeadlineSeconds: Double = 600

    public init(instanceURL: String? = nil, loginURL: String = defaultLoginURL, apiVersion: String = defaultAPIVersion,
                maxInFlight: Int = defaultMaxInFlight, timeoutSeconds: Double = defaultTimeoutSeconds,
                requestDeadlineSeconds: Double = defaultRequestDeadlineSeconds, headers: [String: String] = [:],
                auth: OrgAuth, retry: RetryPolicy = RetryPolicy()) {
        self.instanceURL = instanceURL.map(Self.trimmed)
        self.loginURL = Self.trimmed(loginURL)
        self.apiVersion = apiVersion
        self.maxInFlight = max(1, maxInFlight)
        self.timeoutSeconds = timeoutSeconds
        self.requestDeadlineSeconds = requestDeadlineSeconds
        orgStartedAt = nil
        self.headers = headers
        self.auth = auth
        self.retry = retry
    }

    static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// Refuses plain `http://` except for loopback hosts: tokens must not cross a network in clear text.
    static func checkSecure(_ url: String) throws(OrgClientError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host else {
            throw .invalidConfiguration("\(url) is not an absolute URL")
        }
        if scheme == "https" { return }
        guard scheme == "http" && LoopbackHost.contains(host) else {
            throw .invalidConfiguration("\(url): plain http is only allowed for loopback hosts; use https")
        }
    }
}

/// Retries with exponential backoff and full jitter, for answers that say "try again": 5xx,
/// `UNABLE_TO_LOCK_ROW`, `SERVER_UNAVAILABLE`, and lost connections of idempotent requests.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    public var baseDelaySeconds: Double
    public var maxDelaySeconds: Double

    public init(maxAttempts: Int = 5, baseDelaySeconds: Double = 0.25, maxDelaySeconds: Double = 10) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelaySeconds = baseDelaySeconds
        self.maxDelaySeconds = maxDelaySeconds
    }

    /// The pause before attempt `attempt + 1` (attempt counts from 1): uniform in [0, base·2^(attempt-1)], capped.
    func delay(afterAttempt attempt: Int) -> Double {
        let ceiling = min(maxDelaySeconds, baseDelaySeconds * pow(2, Double(attempt - 1)))
        return Double.random(in: 0...max(ceiling, 0))
    }

    /// Error codes that mean the org did not apply the request and it may be sent again.
    static let retryableCodes: Set<String> = ["UNABLE_TO_LOCK_ROW", "SERVER_UNAVAILABLE"]
}
