import Connectors
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
        /// How long the org may go on executing a request it received (default 600, Salesforce's limit).
        public var requestDeadlineSeconds: Double?
        public var headers: [String: String]
        public var auth: OrgAuth
    }
}
