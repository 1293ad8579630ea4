import Foundation
import JSON
import Soups
import Stages
import Testing

@Suite struct PipelineRunnerTests {
    func run(_ pipeline: PipelineDefinition, _ options: RunOptions = RunOptions(), control: RunControl = RunControl(),
             observer: RecordingObserver = RecordingObserver()) async throws(PipelineRunner.SetupError) -> RunOutcome {
        try await PipelineRunner(pipeline: pipeline, options: options, observer: observer, control: control).run()
    }

    @Test func aConsumerReadsItsInputWhileTheProducerRuns() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = UUID().uuidString
        // The source emits only once the sink has started: the sink must start while the source runs.
        let pipeline = try loadPipeline("""
            { "name": "stream", "stages": [
                { "id": "source", "type": "test.count", "count": 500, "timeline": "\(key)", "waitFor": "sink" },
                { "id": "sink", "type": "test.count", "from": "source", "timeline": "\(key)" } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages.map { $0.error ?? "" })")
        #expect(outcome.report.stages.first { $0.id == "sink" }?.counts["read"] == 500)
        let timeline = await Timeline.shared.entries(key)
        #expect(timeline.firstIndex(of: "start:sink")! < timeline.firstIndex(of: "finish:source")!)
        #expect(timeline.last == "finish:sink")
    }

    @Test func producersHeldBackByTheirReadersStillDeliverEveryRecord() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // "sink" reads "source" and then "middle", which itself reads "source": each producer may
        // run only a little ahead of the stages reading it, and none may wait on a stage that is
        // busy with another input.
        let pipeline = try loadPipeline("""
            { "name": "throttle", "stages": [
                { "id": "source", "type": "test.count", "count": 40000, "emitBatch": 1000 },
                { "id": "middle", "type": "test.count", "from": "source", "readBatch": 500 },
                { "id": "sink", "type": "test.count", "from": ["source", "middle"], "readBatch": 3000 } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages.map { $0.error ?? "" })")
        #expect(outcome.report.stages.first { $0.id == "middle" }?.counts["read"] == 40000)
        #expect(outcome.report.stages.first { $0.id == "sink" }?.counts["read"] == 80000)
        let store = try SoupStore.openForReading(path: pipeline.store)
        let sunk = try await store.datasets.records("sink", afterSeq: 39_998, limit: 4).map(\.record)
        #expect(sunk == [["n": 39998, "seenBy": "sink"], ["n": 39999, "seenBy": "sink"],
                         ["n": 0, "seenBy": "sink"], ["n": 1, "seenBy": "sink"]])
    }

    @Test func aConsumerOfAFailedProducerStopsWithItsReason() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = UUID().uuidString
        let pipeline = try loadPipeline("""
            { "name": "stream", "stages": [
                { "id": "source", "type": "test.count", "timeline": "\(key)", "waitFor": "sink", "fail": "source broke" },
                { "id": "sink", "type": "test.count", "from": "source", "timeline": "\(key)" } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 1)
        #expect(outcome.report.stages.first { $0.id == "source" }?.error == "source broke")
        // The consumer stopped because its producer failed: it says so, not "CancellationError()".
        let sink = outcome.report.stages.first { $0.id == "sink" }
        #expect(sink?.status == .skipped)
        #expect(sink?.error == "stopped before it finished: another stage failed")
    }

    @Test func customStageRunsAndPassesRecordsDownstream() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = UUID().uuidString
        let pipeline = try loadPipeline("""
            { "name": "flow", "stages": [
                { "id": "source", "type": "test.count", "count": 20, "timeline": "\(key)" },
                { "id": "sink", "type": "test.count", "from": "source", "timeline": "\(key)" } ] }
            """, in: directory)
        let observer = RecordingObserver()
        let outcome = try await run(pipeline, observer: observer)
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.status == .succeeded)
        let sink = try #require(outcome.report.stages.first { $0.id == "sink" })
        #expect(sink.counts == ["read": 20, "created": 0, "rejected": 0])
        #expect(sink.byObject == ["Test": ["read": 20]])
        let timeline = await Timeline.shared.entries(key)
        #expect(timeline.first == "start:source" && timeline.last == "finish:sink", "\(timeline)")

        let store = try SoupStore.openForReading(path: pipeline.store)
        let records = try await store.datasets.records("sink", limit: 100).map(\.record)
        #expect(records.count == 20)
        #expect(records[19] == ["n": 19, "seenBy": "sink"])
        #expect(observer.lines.contains("[sink] done with 0 records"))
    }

    @Test func independentBranchesRunConcurrently() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = UUID().uuidString
        // Each branch waits until the other has started: this only finishes if they overlap.
        let pipeline = try loadPipeline("""
            { "stages": [
                { "id": "left", "type": "test.count", "count": 1, "timeline": "\(key)", "waitFor": "right" },
                { "id": "right", "type": "test.count", "count": 1, "timeline": "\(key)", "waitFor": "left" },
                { "id": "join", "type": "test.count", "from": ["left", "right"], "timeline": "\(key)" } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.report.status == .succeeded)
        let entries = await Timeline.shared.entries(key)
        // join reads both inputs as they are written, so it can only end after both.
        #expect(entries.firstIndex(of: "finish:join")! > entries.firstIndex(of: "finish:left")!)
        #expect(entries.firstIndex(of: "finish:join")! > entries.firstIndex(of: "finish:right")!)
        #expect(outcome.report.stages.first { $0.id == "join" }?.counts["read"] == 2)
    }

    @Test func aFailedStageSkipsWhatIsLeftAndExitsOne() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "stages": [
                { "id": "load", "type": "test.count", "count": 5 },
                { "id": "boom", "type": "test.count", "after": "load", "fail": "the org said no" },
                { "id": "later", "type": "test.count", "after": "boom" },
                { "id": "report", "type": "report", "formats": ["json", "md", "html", "csv"] } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.report.status == .failed)
        #expect(outcome.exitCode == 1)
        #expect(outcome.report.stages.map(\.status) == [.succeeded, .failed, .skipped, .succeeded])
        #expect(outcome.report.error == "the org said no")
        let files = try FileManager.default.contentsOfDirectory(atPath: outcome.report.reportDir).sorted()
        #expect(files == ["report.html", "report.json", "report.md", "run.log", "stages.csv"])
        let json = try JSONParser.parse(String(contentsOfFile: outcome.report.reportDir + "/report.json", encoding: .utf8))
        #expect(json["status"] == "failed")
        #expect(json["exitCode"] == 1)
        #expect(json["stages"]?.arrayValue?[1]["error"] == "the org said no")
        let csv = try String(contentsOfFile: outcome.report.reportDir + "/stages.csv", encoding: .utf8)
        #expect(csv.contains("boom,test.count,failed,"))
    }

    @Test func invalidInputBeforeAnyChangeExitsTwo() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "read", "type": "test.count", "fail": "data.csv: line 3: bad quote", "failKind": "invalidInput" } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 2)
        #expect(outcome.report.status == .failed)
    }

    @Test func rejectedRecordsMakeThePipelinePartial() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline(#"{ "stages": [ { "id": "a", "type": "test.count", "count": 2, "reject": 1 } ] }"#, in: directory)
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 3)
        #expect(outcome.report.status == .partial)
        #expect(outcome.report.stages[0].status == .partial)
    }

    @Test func aSecondRunOnTheSameStoreIsRefused() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline(#"{ "stages": [ { "id": "a", "type": "test.count" } ] }"#, in: directory)
        let held = try StoreLock(storePath: pipeline.store)
        do {
            _ = try await run(pipeline)
            Issue.record("expected the run to be refused")
        } catch {
            #expect(error.exitCode == 4)
            #expect(error.description == "\(pipeline.store): another run holds this store")
        }
        held.release()
        #expect(try await run(pipeline).exitCode == 0)
    }

    @Test func onlyReadsDatasetsAnEarlierRunLeft() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "source", "type": "test.count", "count": 4 },
                          { "id": "sink", "type": "test.count", "from": "source" } ] }
            """, in: directory)
        do {
            _ = try await run(pipeline, RunOptions(only: ["sink"]))
            Issue.record("expected --only to need the source dataset")
        } catch {
            #expect(error.exitCode == 2)
            #expect(error.description.contains(#"it reads stage "source", and the store holds no complete dataset from it"#))
        }
        _ = try await run(pipeline)
        let outcome = try await run(pipeline, RunOptions(only: ["sink"]))
        #expect(outcome.report.stages.map(\.id) == ["sink"])
        #expect(outcome.report.stages[0].counts["read"] == 4)
    }

    @Test func aTransformReadByOneStageHandsItsRecordsOnInMemory() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = UUID().uuidString
        // "sink" starts only once "gate" has ended: "shape" is held until it reads, and no record
        // of the 40,000 (twice what a stored dataset keeps in memory) is lost meanwhile.
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "source", "type": "test.count", "count": 40000, "emitBatch": 1000, "timeline": "\(key)" },
                          { "id": "shape", "type": "transform", "from": "source", "set": { "twice": "n * 2" } },
                          { "id": "gate", "type": "test.count", "count": 1, "waitFor": "source", "timeline": "\(key)" },
                          { "id": "sink", "type": "test.count", "from": "shape", "after": ["gate"], "readBatch": 3000 } ] }
            """, in: directory)
        #expect(pipeline.streamedOutputs == ["shape": "sink"])
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages.map { $0.error ?? "" })")
        #expect(outcome.report.stages.first { $0.id == "shape" }?.counts["read"] == 40000)
        #expect(outcome.report.stages.first { $0.id == "sink" }?.counts["read"] == 40000)
        let store = try SoupStore.openForReading(path: pipeline.store)
        #expect(try await store.datasets.records("shape", limit: 10).isEmpty)
        #expect(try await store.datasets.info("shape")?.complete == false)
        let sunk = try await store.datasets.records("sink", afterSeq: 39_998, limit: 4).map(\.record)
        #expect(sunk == [["n": 39998, "twice": 79996, "seenBy": "sink"], ["n": 39999, "twice": 79998, "seenBy": "sink"]])

        // Run alone, the reader runs its transform again: the store holds nothing to read.
        let observer = RecordingObserver()
        let again = try await run(pipeline, RunOptions(only: ["sink"]), observer: observer)
        #expect(again.exitCode == 0)
        #expect(again.report.stages.map(\.id) == ["shape", "sink"])
        #expect(again.report.stages.last?.counts["read"] == 40000)
        #expect(observer.lines.contains { $0.contains("shape runs too: its output goes to sink in memory and is not kept between runs") })
    }

    @Test func aTransformAnotherStageWaitsForIsStored() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Streamed, "shape" would wait for "sink", which waits for "later", which waits for "shape".
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "source", "type": "test.count", "count": 40000, "emitBatch": 1000 },
                          { "id": "shape", "type": "transform", "from": "source" },
                          { "id": "later", "type": "test.count", "count": 1, "after": ["shape"] },
                          { "id": "sink", "type": "test.count", "from": "shape", "after": ["later"], "readBatch": 3000 },
                          { "id": "both", "type": "transform", "from": "source" },
                          { "id": "one", "type": "test.count", "from": "both" },
                          { "id": "two", "type": "test.count", "from": ["both", "source"] } ] }
            """, in: directory)
        #expect(pipeline.streamedOutputs.isEmpty)
        let outcome = try await run(pipeline)
        #expect(outcome.exitCode == 0, "\(outcome.report.stages.map { $0.error ?? "" })")
        #expect(outcome.report.stages.first { $0.id == "sink" }?.counts["read"] == 40000)
        let store = try SoupStore.openForReading(path: pipeline.store)
        let shape = try await store.datasets.info("shape")
        #expect(shape?.count == 40000 && shape?.complete == true && shape?.runId == outcome.report.runId)
        #expect(try await store.datasets.info("both")?.count == 40000)
    }

    @Test func aDryRunReadsTheDatasetsAnEarlierRunLeft() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "source", "type": "test.count", "count": 4 },
                          { "id": "sink", "type": "test.count", "from": "source" } ] }
            """, in: directory)
        _ = try await run(pipeline)
        let outcome = try await run(pipeline, RunOptions(dryRun: true, only: ["sink"]))
        #expect(outcome.exitCode == 0)
        #expect(outcome.report.stages[0].counts["read"] == 4)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
            .filter { $0.hasPrefix("pipeline-dry-run-\(outcome.report.runId)") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test func dryRunLeavesTheStoreByteForByte() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "soups": [{"soupName": "S", "indexes": [{"path": "Id", "type": "string"}]}],
              "stages": [ { "id": "a", "type": "test.count", "count": 3 } ] }
            """, in: directory)
        _ = try await run(pipeline)
        let before = try Data(contentsOf: URL(fileURLWithPath: pipeline.store))
        let outcome = try await run(pipeline, RunOptions(dryRun: true))
        #expect(outcome.report.dryRun)
        #expect(outcome.exitCode == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: pipeline.store)) == before)
        #expect(try await SoupStore.openForReading(path: pipeline.store).runs.all().count == 1)
    }

    @Test func runsAreRecordedAndSoupsAndSyncsPrepared() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "name": "rec", "soups": [{"soupName": "S", "indexes": [{"path": "Id", "type": "string"}]}],
              "syncs": [{"syncName": "Down", "syncType": "syncDown", "soupName": "S", "target": {"type": "soql", "query": "SELECT Id FROM Account"}}],
              "stages": [ { "id": "a", "type": "test.count", "count": 1 } ] }
            """, in: directory)
        let outcome = try await run(pipeline)
        let store = try SoupStore(path: pipeline.store)
        #expect(try await store.soupSpecs().map(\.name) == ["S"])
        var sync = try await store.syncs.state(named: "Down")
        #expect(sync.status == .new)
        let runs = try await store.runs.all()
        #expect(runs.map(\.id) == [outcome.report.runId])
        #expect(runs[0].status == "succeeded")
        #expect(runs[0].reportDir == outcome.report.reportDir)
        #expect(outcome.report.runId.range(of: #"^\d{8}T\d{6}Z-[0-9a-f]{6}$"#, options: .regularExpression) != nil)
        #expect(outcome.report.reportDir.hasSuffix("/.pipeline/reports/rec/\(outcome.report.runId)"))

        // A sync left RUNNING by a dead process is STOPPED by the next run.
        sync.transition(to: .running, at: 1000)
        try await store.syncs.save(sync)
        try store.close()
        let observer = RecordingObserver()
        _ = try await run(pipeline, observer: observer)
        #expect(try await SoupStore.openForReading(path: pipeline.store).syncs.state(named: "Down").status == .stopped)
        #expect(observer.lines.contains { $0.contains("sync Down was RUNNING when its process died") })
    }

    @Test func aStopRequestEndsTheRunAsStopped() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = UUID().uuidString
        let pipeline = try loadPipeline("""
            { "stages": [ { "id": "wait", "type": "test.count", "timeline": "\(key)", "waitFor": "never" },
                          { "id": "next", "type": "test.count", "after": "wait" } ] }
            """, in: directory)
        let control = RunControl()
        Task {
            while !(await Timeline.shared.hasStarted(key, "wait")) { try await Task.sleep(for: .milliseconds(5)) }
            control.requestStop(exitCode: 130)
        }
        let outcome = try await run(pipeline, control: control)
        #expect(outcome.report.status == .stopped)
        #expect(outcome.exitCode == 130)
        #expect(outcome.report.stages.map(\.status) == [.failed, .skipped])
    }

    @Test func secretsNeverReachTheLogs() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "org": { "instanceUrl": "https://x.my.salesforce.com", "auth": { "flow": "access_token", "accessToken": "${TOKEN}" } },
              "stages": [ { "id": "a", "type": "test.count", "fail": "request with Bearer 00Dxx!SECRETTOKEN failed" } ] }
            """, in: directory, variables: ["TOKEN": "00Dxx!SECRETTOKEN"])
        let observer = RecordingObserver()
        let outcome = try await run(pipeline, observer: observer)
        let log = try String(contentsOfFile: outcome.report.reportDir + "/run.log", encoding: .utf8)
        let report = try String(contentsOfFile: outcome.report.reportDir + "/report.json", encoding: .utf8)
        #expect(log.contains("request with Bearer ******** failed"))
        for text in [log, report] + observer.events.map({ $0.jsonLine(at: Date()) }) {
            #expect(!text.contains("SECRETTOKEN"))
        }
    }

    @Test func progressAndStageEventsAreJSONLines() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline(#"{ "stages": [ { "id": "a", "type": "test.count", "count": 1 } ] }"#, in: directory)
        let observer = RecordingObserver()
        _ = try await run(pipeline, observer: observer)
        let lines = observer.events.map { try! JSONParser.parse($0.jsonLine(at: Date(timeIntervalSince1970: 0))) }
        #expect(lines.map { $0["event"]?.stringValue ?? "" } == ["runStarted", "stageStarted", "log", "stageFinished", "runFinished"])
        #expect(lines[0]["ts"] == "1970-01-01T00:00:00.000Z")
        #expect(lines[3]["counts"] == ["created": 1, "read": 0, "rejected": 0])
        #expect(lines[4]["exitCode"] == 0)
    }
}

@Suite struct StageGraphTests {
    @Test func mermaidAndDotShowDataAndOrderEdges() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pipeline = try loadPipeline("""
            { "name": "g", "stages": [ { "id": "extract", "type": "test.count" },
                                      { "id": "load", "type": "test.count", "from": "extract" },
                                      { "id": "report", "type": "report", "after": ["load"] } ] }
            """, in: directory)
        let graph = StageGraph(stages: pipeline.stages)
        #expect(graph.topologicalOrder() == ["extract", "load", "report"])
        #expect(graph.mermaid(title: "g") == """
            ---
            title: g
            ---
            flowchart TD
                s_extract["extract<br/><small>test.count</small>"]
                s_load["load<br/><small>test.count</small>"]
                s_report["report<br/><small>report</small>"]
                s_extract --> s_load
                s_load -.-> s_report
            """)
        #expect(graph.dot(title: "g").contains(#""load" -> "report" [style=dashed];"#))
        #expect(graph.dot(title: "g").contains(#""extract" -> "load";"#))
    }
}
