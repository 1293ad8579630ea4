import Synchronization

/// How to run a pipeline.
public struct RunOptions: Sendable {
    /// Run on a temporary copy of the store and send no write request to the org.
    public var dryRun: Bool
    /// Run only these stages, reading their inputs from datasets an earlier run left in the store.
    public var only: [String]
    /// Overrides the report directory.
    public var reportDirectory: String?

    public init(dryRun: Bool = false, only: [String] = [], reportDirectory: String? = nil) {
        self.dryRun = dryRun
        self.only = only
        self.reportDirectory = reportDirectory
    }
}

/// Lets the process stop a run from outside (SIGINT / SIGTERM): the run finishes its current
/// batches, marks running syncs STOPPED, writes its report with status `stopped` and exits with
/// the code given.
public final class RunControl: Sendable {
    private let requested = Mutex<Int32?>(nil)

    public init() {}

    /// Asks the run to stop; `exitCode` is 130 for SIGINT, 143 for SIGTERM.
    public func requestStop(exitCode: Int32) {
        requested.withLock { if $0 == nil { $0 = exitCode } }
    }

    /// The exit code of the stop request, if one was made.
    public var stopExitCode: Int32? { requested.withLock { $0 } }
}

/// The end of a run: its report and the process exit code.
public struct RunOutcome: Sendable {
    public var report: RunReport
    public var exitCode: Int32 { report.exitCode }
}
