import Foundation
import Logging
import Soups

/// Runs a set of stages in dependency order, starting each as soon as everything it depends on has
/// finished, so independent branches run concurrently. When a stage fails, or the run is asked to
/// stop (the caller cancels the task), running stages are cancelled — they finish their current
/// batch — and the rest are skipped.
struct GraphExecutor: Sendable {
    let stages: [StageDefinition]
    let runId: String
    let pipeline: PipelineDefinition
    let store: SoupStore
    let dryRun: Bool
    let log: RunLog
    let orgSession: OrgSession
    let reportDirectory: String
    let control: RunControl
    /// The run's datasets as they are written; streamed ones stay in it.
    let feed: StageFeed
    /// When the run began: stages report their start as an offset from it.
    let began = ContinuousClock.now

    func run() async -> [String: StageOutcome] {
        var outcomes: [String: StageOutcome] = [:]
        let selectedIds = Set(stages.map(\.id))
        var pending = stages
        var stopping = false

        /// Stages whose dataset has begun.
        var begun = Set<String>()
        await withTaskGroup(of: Event.self) { group in
            var running = 0
            func startReady() {
                var index = 0
                while index < pending.count {
                    let stage = pending[index]
                    // Dependencies outside the selection (with --only) were satisfied by an earlier run.
                    let dependencies = stage.dependencies.filter(selectedIds.contains)
                    if stopping || dependencies.contains(where: { outcomes[$0]?.status == .failed || outcomes[$0]?.status == .skipped }) {
                        outcomes[stage.id] = StageOutcome(status: .skipped, result: StageResult(), durationMs: 0, error: nil, failureKind: nil)
                        log.emit(.stageFinished(stage: stage.id, status: .skipped, counts: [:], durationMs: 0, error: nil))
                        pending.remove(at: index)
                        index = 0
                        continue
                    }
                    // A stage may start once its `after` stages have ended and its `from` stages have
                    // begun their datasets: it then reads them as they grow.
                    let afterDone = stage.after.filter(selectedIds.contains).allSatisfy { outcomes[$0] != nil }
                    let inputsBegun = stage.from.filter(selectedIds.contains).allSatisfy { outcomes[$0] != nil || begun.contains($0) }
                    if afterDone && inputsBegun {
                        pending.remove(at: index)
                        running += 1
                        group.addTask { .finished(stage.id, await self.execute(stage)) }
                        continue
                    }
                    index += 1
                }
            }

            // Streaming consumers wait for their producers' datasets to begin.
            let producers = Set(stages.flatMap(\.from)).intersection(selectedIds)
            for producer in producers {
                group.addTask { [feed] in
                    await feed.waitUntilStarted(producer)
                    return .begun(producer)
                }
            }
            startReady()
            // Until no stage runs and no awaited producer can still begin (one that was skipped never will).
            while running > 0 || producers.contains(where: { !begun.contains($0) && outcomes[$0] == nil }) {
                guard let event = await group.next() else { break }
                switch event {
                case .begun(let id):
                    begun.insert(id)
                case .finished(let id, let outcome):
                    running -= 1
                    outcomes[id] = outcome
                    if outcome.status == .failed || control.stopExitCode != nil || Task.isCancelled {
                        stopping = true
                        group.cancelAll()
                        await feed.wakeAll()
                    }
                }
                startReady()
            }
            group.cancelAll()
            await feed.wakeAll()
        }
        return outcomes
    }

    /// What the executor's tasks report.
    enum Event: Sendable {
        case begun(String)
        case finished(String, StageOutcome)
    }

    private func execute(_ stage: StageDefinition) async -> StageOutcome {
        let started = ContinuousClock.now
        log.emit(.stageStarted(stage: stage.id, type: stage.type))
        let emit: @Sendable (RunEvent) -> Void = { [log] event in log.emit(event) }
        var logger = Logger(label: "pipeline.\(stage.id)") { _ in EventLogHandler(stage: stage.id, emit: emit) }
        logger.logLevel = .debug
        let context = StageContext(
            stageId: stage.id, runId: runId, pipeline: pipeline, store: store, dryRun: dryRun, logger: logger,
            progress: ProgressReporter(stage: stage.id, emit: emit), reportDirectory: reportDirectory,
            inputs: stage.from, orgSession: orgSession, feed: feed)
        var outcome: StageOutcome
        do {
            try await store.datasets.begin(stage.id, runId: runId)
            await feed.started(stage.id)
            let result = try await stage.stage.run(in: context)
            // A streamed dataset is never complete in the store: it holds none of it.
            if !Task.isCancelled, !feed.isStreamed(stage.id) { try await store.datasets.finish(stage.id) }
            await feed.ended(stage.id, failed: Task.isCancelled)
            outcome = StageOutcome(status: result.hasProblems ? .partial : .succeeded, result: result, durationMs: 0, error: nil, failureKind: nil)
        } catch where Task.isCancelled && control.stopExitCode != nil {
            outcome = StageOutcome(status: .failed, result: (error as? StageFailure)?.partialResult ?? StageResult(), durationMs: 0,
                                   error: "stopped before it finished", failureKind: .failed)
        } catch let failure as StageFailure where Task.isCancelled {
            // Another stage failed and this one stopped with it, keeping what it committed.
            outcome = StageOutcome(status: .skipped, result: failure.partialResult ?? StageResult(), durationMs: 0,
                                   error: "stopped before it finished: another stage failed", failureKind: nil)
        } catch let failure as StageFailure {
            outcome = StageOutcome(status: .failed, result: failure.partialResult ?? StageResult(), durationMs: 0, error: failure.message,
                                   failureKind: failure.kind)
        } catch is CancellationError {
            // Another stage failed: this one stopped with it (it was "failed — CancellationError()").
            outcome = StageOutcome(status: .skipped, result: StageResult(), durationMs: 0,
                                   error: "stopped before it finished: another stage failed", failureKind: nil)
        } catch {
            outcome = StageOutcome(status: .failed, result: StageResult(), durationMs: 0, error: "\(error)", failureKind: .failed)
        }
        if outcome.status == .failed { await feed.ended(stage.id, failed: true) }
        await feed.readerEnded(stage.id)
        outcome.startedMs = Self.milliseconds(started - began)
        outcome.durationMs = Self.milliseconds(ContinuousClock.now - started)
        var counts = outcome.result.counts
        for key in type(of: stage.stage).countKeys where counts[key] == nil { counts[key] = 0 }
        log.emit(.stageFinished(stage: stage.id, status: outcome.status, counts: counts, durationMs: outcome.durationMs, error: outcome.error))
        return outcome
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
