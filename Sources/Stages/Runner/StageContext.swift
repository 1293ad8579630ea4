import Connectors
import Foundation
import JSON
import Logging
import Soups

/// Opens the org connection of a run when a stage first needs it (before any stage starts when
/// one writes to the org). A run that gives up cancels it: what it opened by then it lets go.
public typealias OrgConnector = @Sendable (OrgConfiguration) async throws -> any OrgClient

/// What a running stage gets: the store, the org, the dry-run flag, progress and logging, its
/// input datasets and its output dataset.
public struct StageContext: Sendable {
    public let stageId: String
    public let runId: String
    public let pipeline: PipelineDefinition
    /// The soup store (a temporary copy during a dry run).
    public let store: SoupStore
    /// `true` during `--dry-run`: send no write request to the org.
    public let dryRun: Bool
    public let logger: Logger
    public let progress: ProgressReporter
    /// The report directory of this run.
    public let reportDirectory: String
    let inputs: [String]
    let orgSession: OrgSession
    let feed: StageFeed

    /// The org client, connected on first use; fails when the pipeline declares no `org`.
    public func org() async throws -> any OrgClient {
        try await orgSession.client()
    }

    /// The records of every `from` stage, in order, a batch at a time — followed as they are
    /// written when a `from` stage is still running.
    /// The next batch is read while the stage works on the current one. With `firstBatchSize`, the
    /// batches start that small and double up to `batchSize`, so a stage that writes each batch
    /// can work on the second while the first is written even when its input is short.
    public func inputBatches(batchSize: Int = 1000, firstBatchSize: Int? = nil) -> PrefetchingBatches {
        PrefetchingBatches(base: store.datasets.batches(inputs, batchSize: batchSize, firstBatchSize: firstBatchSize,
                                                      feed: StageFeed.Reader(feed: feed, stage: stageId)))
    }

    /// Appends records to this stage's output dataset (read by stages that name it in `from`);
    /// a streamed output goes to its reader in memory only. Waits first while the slowest reader
    /// is far behind, then returns as soon as the records are handed over: the producer lets go
    /// of them, so a sole reader owns them and changes them without a copy.
    public func emit(_ records: [JSONValue]) async throws {
        await feed.throttle(stageId)
        if feed.isStreamed(stageId) {
            await feed.appended(stageId, records: records, last: nil)
        } else {
            let last = try await store.datasets.append(stageId, records: records)
            await feed.appended(stageId, records: records, last: last)
        }
    }

    /// `true` once the run is stopping (another stage failed, or SIGINT / SIGTERM): finish the
    /// current batch and return.
    public var shouldStop: Bool { Task.isCancelled }
}

/// Reports a stage's progress as Mobile Sync sync states.
public struct ProgressReporter: Sendable {
    let stage: String
    let emit: @Sendable (RunEvent) -> Void

    /// Publishes a sync-state update (`status` RUNNING, DONE, FAILED or STOPPED).
    public func update(sync: String? = nil, status: String, progress: Int, totalSize: Int) {
        emit(.progress(stage: stage, sync: sync, status: status, progress: progress, totalSize: totalSize))
    }

    /// A meter for a stage's work in `unit`s (`bytes` of a file, `records`), of `total` if known.
    public func meter(unit: String, total: Int64? = nil) -> ProgressMeter {
        ProgressMeter(stage: stage, unit: unit, total: total, emit: emit)
    }
}

/// The run's single, lazily opened org connection.
actor OrgSession {
    private let configuration: OrgConfiguration?
    private let connector: OrgConnector?
    private var connected: (any OrgClient)?
    /// The connection being opened; concurrent stages wait for the same one.
    private var connecting: Task<any OrgClient, Error>?
    /// Set by ``cancelConnecting()``: no connection is opened any more.
    private var cancelled = false

    init(configuration: OrgConfiguration?, connector: OrgConnector?) {
        self.configuration = configuration
        self.connector = connector
    }

    func client() async throws -> any OrgClient {
        if let connected { return connected }
        guard let configuration else {
            throw StageFailure(.invalidInput, "this stage needs an org, and the pipeline declares no \"org\"")
        }
        guard let connector else {
            throw StageFailure(.invalidInput, "no org connector is installed in this build of the pipeline runner")
        }
        if let connecting { return try await connecting.value }
        if cancelled { throw CancellationError() }
        let task = Task { try await connector(configuration) }
        connecting = task
        let client = try await task.value
        connected = client
        return client
    }

    /// The requests the run's org client made, if it connected.
    func usage() async -> APIUsage? {
        await connected?.usage()
    }

    /// Stops a connection still being opened, and opens none after (a run giving up before any
    /// stage started). A connector cancelled partway lets go of what it opened.
    func cancelConnecting() {
        cancelled = true
        connecting?.cancel()
    }

    /// Closes the connection, if one was opened.
    func close() async {
        await connected?.shutdown()
        connected = nil
    }
}

/// Forwards swift-log messages of one stage to the run's events, redacted.
struct EventLogHandler: LogHandler {
    let stage: String?
    let emit: @Sendable (RunEvent) -> Void
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let level: RunEvent.LogLevel
        switch event.level {
        case .trace, .debug: level = .debug
        case .info, .notice: level = .info
        case .warning: level = .warning
        case .error, .critical: level = .error
        }
        var text = "\(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty { text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
        emit(.log(level: level, stage: stage, message: text))
    }
}
