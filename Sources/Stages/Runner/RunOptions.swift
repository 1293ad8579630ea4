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
    private struct State {
        var exitCode: Int32?
        var handlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Asks the run to stop; `exitCode` is 130 for SIGINT, 143 for SIGTERM.
    public func requestStop(exitCode: Int32) {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            guard state.exitCode == nil else { return [] }
            state.exitCode = exitCode
            defer { state.handlers = [] }
            return state.handlers
        }
        for handler in handlers { handler() }
    }

    /// The exit code of the stop request, if one was made.
    public var stopExitCode: Int32? { state.withLock { $0.exitCode } }

    /// Calls `handler` once when a stop is requested — at once if one already was.
    func whenStopped(_ handler: @escaping @Sendable () -> Void) {
        let stopped = state.withLock { state -> Bool in
            if state.exitCode != nil { return true }
            state.handlers.append(handler)
            return false
        }
        if stopped { handler() }
    }
}

/// The end of a run: its report and the process exit code.
public struct RunOutcome: Sendable {
    public var report: RunReport
    public var exitCode: Int32 { report.exitCode }
}
