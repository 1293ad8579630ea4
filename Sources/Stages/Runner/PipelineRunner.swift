import Connectors
import Foundation
import JSON
import Logging
import Soups

/// Runs a loaded pipeline: takes the store lock, prepares soups and syncs, runs the stages in
/// dependency order — independent branches concurrently — and writes the run record and report.
public struct PipelineRunner: Sendable {
    public var pipeline: PipelineDefinition
    public var options: RunOptions
    public var observer: any RunObserver
    public var orgConnector: OrgConnector?
    public var control: RunControl

    public init(pipeline: PipelineDefinition, options: RunOptions = RunOptions(), observer: any RunObserver,
                orgConnector: OrgConnector? = nil, control: RunControl = RunControl()) {
        self.pipeline = pipeline
        self.options = options
        self.observer = observer
        self.orgConnector = orgConnector
        self.control = control
    }

    /// Errors that end a run before any stage starts.
    public enum SetupError: Error, Sendable, CustomStringConvertible {
        /// Another run holds the store (exit 4).
        case storeLocked(String)
        /// Input the run cannot start with, e.g. `--only` without stored datasets (exit 2).
        case invalidInput(String)

        public var description: String {
            switch self {
            case .storeLocked(let message), .invalidInput(let message): return message
            }
        }

        public var exitCode: Int32 {
            switch self {
            case .storeLocked: return 4
            case .invalidInput: return 2
            }
        }
    }

    /// Dry runs work on a copy beside the store (same disk, same owner-only directory), named
    /// `<store>.dry-run-<runId>.sqlite`.
    static func dryRunCopyPrefix(of store: String) -> String {
        store + ".dry-run-"
    }

    /// Removes every dry-run copy of `store` (and its WAL, shared-memory and datasets files).
    static func removeDryRunCopies(of store: String) {
        let directory = (store as NSString).deletingLastPathComponent
        let prefix = (dryRunCopyPrefix(of: store) as NSString).lastPathComponent
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix(prefix) {
            try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
        }
    }

    /// Runs the pipeline. Throws ``SetupError`` only when the run cannot start; every other failure
    /// is in the returned report.
    public func run() async throws(SetupError) -> RunOutcome {
        let startDate = Date()
        let runId = Timestamp.runId(startDate)
        let redactor = Redactor(secrets: pipeline.secrets)
        let reportStage = pipeline.stages.compactMap { $0.stage as? ReportStage }.first
        let reportDirectory = options.reportDirectory.map { PathResolver.absolute($0, relativeTo: FileManager.default.currentDirectoryPath) }
            ?? reportStage?.directory.map { ($0 as NSString).appendingPathComponent(runId) }
            ?? Self.defaultReportRoot(store: pipeline.store, pipeline: pipeline.name, runId: runId)

        let lock = try lockStore()
        defer { lock.release() }
        // Copies left by dry runs that were killed: with the lock held, none is in use.
        Self.removeDryRunCopies(of: pipeline.store)

        let (selected, selectedIds, rerun) = try selectStages()
        let streamed = pipeline.streamedOutputs
        // When a stage writes to the org, the org is connected (and whether it refuses the run's
        // writes found out) while the store opens; no stage starts before the answer.
        let orgSession = OrgSession(configuration: pipeline.org, connector: orgConnector)
        let refusal = Task { [hasOrg = pipeline.org != nil] in await Self.orgRefusal(selected, orgSession: orgSession, hasOrg: hasOrg) }
        // The run cannot start: the connection is stopped or let go first.
        func abandon(_ error: SetupError) async -> SetupError {
            await orgSession.cancelConnecting()
            _ = await refusal.value
            await orgSession.close()
            return error
        }

        let log = RunLog(directory: reportDirectory, observer: observer, redactor: redactor)
        let store: SoupStore
        do {
            store = try await openStore(runId: runId, log: log)
        } catch let error as SetupError {
            throw await abandon(error)
        } catch {
            throw await abandon(.invalidInput("\(pipeline.store): \(redactor.redact("\(error)"))"))
        }
        defer {
            try? store.close()
            if options.dryRun { Self.removeDryRunCopies(of: pipeline.store) }
        }

        if let missing = await Self.missingInput(of: selected, outside: selectedIds, in: store) {
            throw await abandon(.invalidInput(
                "--only \(missing.stage): it reads stage \"\(missing.input)\", and the store holds no complete dataset from it; run \"\(missing.input)\" first"))
        }

        log.emit(.runStarted(runId: runId, pipeline: pipeline.name, dryRun: options.dryRun))
        for message in rerun.sorted() { log.emit(.log(level: .info, stage: nil, message: message)) }
        if !options.dryRun { await recordStart(runId: runId, at: startDate, reportDirectory: reportDirectory, in: store) }
        let executor = GraphExecutor(
            stages: selected, runId: runId, pipeline: pipeline, store: store, dryRun: options.dryRun, log: log,
            orgSession: orgSession, reportDirectory: reportDirectory, control: control,
            feed: StageFeed(streamed: streamed.filter { selectedIds.contains($0.key) && selectedIds.contains($0.value) },
                            soleReaders: pipeline.soleReaders))
        let results = await execute(selected, executor: executor, refusal: await refusal.value, log: log)

        var report = RunReport(
            pipeline: pipeline.name, runId: runId, dryRun: options.dryRun, status: .succeeded, exitCode: 0,
            startedAt: Timestamp.iso8601(startDate), finishedAt: "", reportDir: reportDirectory, stages: [], api: .init())
        report.stages = Self.stageReports(selected, results: results, redactor: redactor)
        if let usage = await orgSession.usage() {
            report.api.requests = usage.requests
            report.api.retries = usage.retries
            report.api.byKind = usage.byKind
            report.api.limitInfo = usage.limitInfo
        }
        await orgSession.close()
        (report.status, report.exitCode) = Self.outcome(of: selected.map { results[$0.id] }, stopCode: control.stopExitCode)
        report.error = report.stages.first { $0.status == .failed }?.error
        if report.status == .stopped {
            _ = try? await store.syncs.stopOrphaned(at: Timestamp.milliseconds(Date()))
        }
        report.finishedAt = Timestamp.iso8601(Date())
        log.emit(.runFinished(status: report.status, exitCode: report.exitCode, reportDir: reportDirectory))
        await record(report, formats: reportStage?.formats ?? ["json"], log: log, store: store)
        return RunOutcome(report: report)
    }

    /// Takes the store's lock: another run holding it is `storeLocked`; a place where no lock can
    /// be taken is invalid input (retrying later will not change it).
    private func lockStore() throws(SetupError) -> StoreLock {
        do {
            return try StoreLock(storePath: pipeline.store)
        } catch SoupStoreError.storeLocked(let path) {
            throw .storeLocked("\(path): another run holds this store")
        } catch {
            throw .invalidInput("\(error)")
        }
    }

    /// Records the run as running now, so a run that is killed still shows in `pipeline runs`
    /// (as killed, once the next run finds it never finished).
    private func recordStart(runId: String, at startDate: Date, reportDirectory: String, in store: SoupStore) async {
        try? await store.runs.save(StoredRun(
            id: runId, pipeline: pipeline.name, status: "running", exitCode: nil, startedAt: Timestamp.iso8601(startDate),
            finishedAt: nil, reportDir: reportDirectory,
            record: ["pipeline": .string(pipeline.name), "runId": .string(runId), "status": "running",
                     "startedAt": .string(Timestamp.iso8601(startDate)), "reportDir": .string(reportDirectory), "stages": []]))
    }

    /// Runs the stages — unless the org refused the run's writes before any stage started, when
    /// the writing stage fails with the reason, the others are skipped and nothing changes.
    private func execute(_ selected: [StageDefinition], executor: GraphExecutor,
                         refusal: (writer: String, failure: StageFailure)?, log: RunLog) async -> [String: StageOutcome] {
        guard let (writer, refusal) = refusal else {
            let execution = Task { await executor.run() }
            control.whenStopped { execution.cancel() }
            return await execution.value
        }
        var refused = Dictionary(uniqueKeysWithValues: selected.map {
            ($0.id, StageOutcome(status: .skipped, result: StageResult(), durationMs: 0, error: nil, failureKind: nil))
        })
        refused[writer] = StageOutcome(status: .failed, result: StageResult(), durationMs: 0, error: refusal.message, failureKind: refusal.kind)
        log.emit(.stageFinished(stage: writer, status: .failed, counts: [:], durationMs: 0, error: refusal.message))
        return refused
    }

    /// Under `--only`, the first input a selected stage reads from a stage not selected of
    /// which the store holds no complete dataset.
    private static func missingInput(of selected: [StageDefinition], outside selectedIds: Set<String>,
                                     in store: SoupStore) async -> (stage: String, input: String)? {
        for stage in selected {
            for input in stage.from where !selectedIds.contains(input) {
                let info = try? await store.datasets.info(input)
                guard let info, info.complete else { return (stage.id, input) }
            }
        }
        return nil
    }

    /// Writes the report files and the run's record in the store, and closes the run log.
    private func record(_ report: RunReport, formats: [String], log: RunLog, store: SoupStore) async {
        do {
            try ReportWriter(directory: report.reportDir, formats: formats).write(report)
        } catch {
            log.emit(.log(level: .error, stage: nil, message: "cannot write the report in \(report.reportDir): \(error)"))
        }
        log.close()
        try? await store.runs.save(StoredRun(
            id: report.runId, pipeline: pipeline.name, status: report.status.rawValue, exitCode: Int(report.exitCode),
            startedAt: report.startedAt, finishedAt: report.finishedAt, reportDir: report.reportDir, record: report.json))
    }

    /// The stages this run runs: all, or those of `--only` and the producers of their streamed
    /// inputs (a stage whose input is never stored runs with the stage producing it), with a
    /// line saying why for each producer added.
    private func selectStages() throws(SetupError) -> (stages: [StageDefinition], ids: Set<String>, rerun: [String]) {
        for id in options.only where pipeline.stage(id) == nil {
            throw .invalidInput("--only \(id): no stage with that id; known ids: \(pipeline.stages.map(\.id).joined(separator: ", "))")
        }
        let streamed = pipeline.streamedOutputs
        var selectedIds = Set(options.only.isEmpty ? pipeline.stages.map(\.id) : options.only)
        var rerun: [String] = []
        while let (producer, reader) = streamed.first(where: { selectedIds.contains($0.value) && !selectedIds.contains($0.key) }) {
            selectedIds.insert(producer)
            rerun.append("\(producer) runs too: its output goes to \(reader) in memory and is not kept between runs")
        }
        return (pipeline.stages.filter { selectedIds.contains($0.id) }, selectedIds, rerun)
    }

    /// The run's store, soups and syncs registered: the pipeline's, or during a dry run a copy
    /// of it the run may change freely.
    private func openStore(runId: String, log: RunLog) async throws -> SoupStore {
        let store: SoupStore
        if options.dryRun {
            let copy = Self.dryRunCopyPrefix(of: pipeline.store) + runId + ".sqlite"
            if FileManager.default.fileExists(atPath: pipeline.store) {
                try SoupStore.openForReading(path: pipeline.store).copy(to: copy)
            }
            store = try SoupStore(path: copy)
        } else {
            store = try SoupStore(path: pipeline.store)
        }
        try await prepare(store, log: log)
        return store
    }

    /// Each selected stage's line of the report: a stage that never ran is skipped; every count
    /// key its type declares shows, 0 if unused; errors are redacted.
    private static func stageReports(_ selected: [StageDefinition], results: [String: StageOutcome],
                                     redactor: Redactor) -> [RunReport.StageReport] {
        selected.map { stage in
            let result = results[stage.id] ?? StageOutcome(status: .skipped, result: StageResult(), durationMs: 0, error: nil, failureKind: nil)
            var counts = result.result.counts
            for key in type(of: stage.stage).countKeys where counts[key] == nil { counts[key] = 0 }
            return RunReport.StageReport(
                id: stage.id, type: stage.type, status: result.status, startedMs: result.startedMs, durationMs: result.durationMs, counts: counts,
                byObject: result.result.byObject, error: result.error.map(redactor.redact),
                alwaysByObject: ["syncUp", "syncDown", "resync", "cleanGhosts"].contains(stage.type))
        }
    }

    /// Connects before any stage starts when a stage will write to the org, so a refusal (a
    /// production org without `--allow-production`, credentials the org rejects) comes before
    /// local stages change the store: the first writing stage and why, or `nil`.
    static func orgRefusal(_ stages: [StageDefinition], orgSession: OrgSession, hasOrg: Bool) async -> (String, StageFailure)? {
        guard hasOrg, let writer = stages.first(where: { type(of: $0.stage).writesToOrg }) else { return nil }
        do {
            _ = try await orgSession.client()
            return nil
        } catch let failure as StageFailure {
            return (writer.id, failure)
        } catch {
            return (writer.id, StageFailure(.invalidInput, "org: \(error)"))
        }
    }

    /// Registers the soups, creates the syncs that do not exist yet (and gives existing ones the
    /// target and options the file now declares), and marks syncs a dead run left RUNNING as STOPPED.
    private func prepare(_ store: SoupStore, log: RunLog) async throws {
        for soup in pipeline.soups { try await store.registerSoup(soup) }
        for sync in pipeline.syncs {
            try await store.syncs.create(sync.initialState)
            switch try await store.syncs.redefine(sync.initialState) {
            case .unchanged: break
            case .options:
                log.emit(.log(level: .info, stage: nil, message: "sync \(sync.name): its options changed in the pipeline's syncs; the stored sync now has them"))
            case .target:
                log.emit(.log(level: .warning, stage: nil, message: "sync \(sync.name): its target changed in the pipeline's syncs; the stored sync now has it"
                              + (sync.initialState.type == .syncDown ? ", and its next sync down fetches everything (maxTimeStamp reset)" : "")))
            }
        }
        for id in try await store.runs.markDeadKilled() {
            log.emit(.log(level: .warning, stage: nil, message: "run \(id) never finished (its process died); it is recorded as killed"))
        }
        let stopped = try await store.syncs.stopOrphaned(at: Timestamp.milliseconds(Date()))
        for name in stopped {
            log.emit(.log(level: .warning, stage: nil, message: "sync \(name) was RUNNING when its process died; it is now STOPPED and resumes on its next run"))
        }
    }

    /// The run's status and exit code from its stages' outcomes (see the exit codes in docs/pipeline-files.md).
    static func outcome(of outcomes: [StageOutcome?], stopCode: Int32?) -> (RunStatus, Int32) {
        if let stopCode { return (.stopped, stopCode) }
        let finished = outcomes.compactMap { $0 }
        if let failure = finished.first(where: { $0.status == .failed }) {
            let changed = finished.contains { $0.result.changedSomething }
            return (.failed, failure.failureKind == .invalidInput && !changed ? 2 : 1)
        }
        if finished.contains(where: { $0.status == .partial }) { return (.partial, 3) }
        return (.succeeded, 0)
    }

    /// `.pipeline/reports/<pipeline>/<runId>` beside the store.
    static func defaultReportRoot(store: String, pipeline: String, runId: String) -> String {
        let directory = (store as NSString).deletingLastPathComponent
        let base = (directory as NSString).lastPathComponent == ".pipeline" ? directory : (directory as NSString).appendingPathComponent(".pipeline")
        return [base, "reports", pipeline, runId].reduce("") { $0.isEmpty ? $1 : ($0 as NSString).appendingPathComponent($1) }
    }
}

/// How one stage ended.
struct StageOutcome: Sendable {
    var status: StageStatus
    var result: StageResult
    var durationMs: Int
    var error: String?
    var failureKind: StageFailure.Kind?
    /// Milliseconds from the run's start to the stage's.
    var startedMs = 0
}
