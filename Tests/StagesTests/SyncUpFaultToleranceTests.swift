import Connectors
import Foundation
import JSON
import Soups
import Stages
import Synchronization
import Testing

/// A sync up keeps going under faults (issue 50): a request that gets no answer holds its own
/// records only, an org that stops answering stops the stage within the breaker's threshold with
/// what was not sent left dirty, and the attempts of one record are one claimant when reconciled.
@Suite struct SyncUpFaultToleranceTests {
    /// The org answers three writes, then none: the stage stops once `stopAfterFailedRequests`
    /// requests in a row went unanswered, says why, and leaves what it did not send dirty and
    /// unjournaled; once the org's deadline has passed, the next run ends exact.
    @Test(arguments: ["auto", "composite", "graph", "perTree"])
    func anOrgThatStopsAnsweringStopsTheStage(strategy: String) async throws {
        let bench = try await SyncHarness(requestDeadlineSeconds: 1.5)
        defer { Task { await bench.close() } }
        let stages = #"[ { "id": "up", "type": "syncUp", "sync": "trees", "strategy": "\#(strategy)", "maxInFlight": 2, "pageSize": 20, "stopAfterFailedRequests": 3, "stopAfterSilenceSeconds": 0 } ]"#
        let pipeline = try bench.pipeline(syncs: SyncUpIntegrityTests.sync, stages: stages,
                                          org: #""timeoutSeconds": 0.6, "requestDeadlineSeconds": 1.5, "#)
        try await SyncUpIntegrityTests.putTrees(300, prefix: "Z", bench: bench, pipeline)
        try await bench.setFaults(["stallAfterWrites": 3])
        let first = try await bench.run(pipeline)
        let writes = await bench.org.writes()
        try await bench.setFaults([:])
        let stage = first.report.stages[0]
        #expect(first.exitCode == 1, "\(stage)")
        #expect(stage.error?.hasPrefix("the org stopped answering: ") == true && stage.error?.contains("requests in a row timed out") == true,
                "\(stage.error ?? "")")
        // Three answered; then at most the threshold's requests, those in flight beside them (two)
        // and three probes sent alone once they have ended.
        #expect(writes <= 3 + 3 + 2 + 3, "\(strategy): \(writes) write requests reached an org that had stopped answering")
        let dirty = try await bench.entries("Accounts", pipeline).filter(\.isDirty) + bench.entries("Contacts", pipeline).filter(\.isDirty)
        let unsent = dirty.filter { ($0[SyncField.lastError] ?? .null) == .null }
        // A request holds at most a page: 20 trees, 80 records. What no request carried waits,
        // dirty and undecided; only the unanswered requests' records are uncertain.
        let carried = (stage.counts["created"] ?? 0) + (stage.counts["uncertain"] ?? 0)
        #expect(carried <= writes * 80 && unsent.count == 1200 - carried && unsent.count > 0, "\(strategy): \(stage.counts), \(unsent.count) unsent")
        // Writes the client gave up on are decided once the org's deadline has passed.
        await bench.letTimePass(seconds: 5)
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(strategy): \(second.report.stages[0])")
        #expect(SyncUpIntegrityTests.created(first) + SyncUpIntegrityTests.created(second) == 1200)
        try await SyncUpIntegrityTests.expectExact(300, prefix: "Z", bench: bench, pipeline)
    }

    /// A create sent twice (the first attempt refused by a row lock but left in the journal, the
    /// second's answer lost) whose one record the org holds is adopted once both windows have
    /// passed; while the other attempt may still be applied it waits; two records are reported.
    @Test(arguments: [TwoAttempts.bothSettled, .oneStillOpen, .bothApplied])
    func theAttemptsOfOneRecordAreOneClaimant(_ scenario: TwoAttempts) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: SyncUpIntegrityTests.sync, stages: SyncUpIntegrityTests.stages("collections"))
        let stored = try await bench.put([SyncHarness.local("Account", "local_twice", ["Name": "Twice"])], into: "Accounts", pipeline)
        let entryId = try #require(stored.first?.soupEntryId)
        let made = try await bench.client.create("Account", ["Name": "Twice"])
        if scenario == .bothApplied { _ = try await bench.client.create("Account", ["Name": "Twice"]) }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let store = try SoupStore(path: pipeline.store)
        func attempt(sentAgo: Int64, settlesIn: Int64) -> SyncJournalEntry {
            SyncJournalEntry(syncName: "trees", soupName: "Accounts", entryId: entryId, operation: .create, objectType: "Account",
                             recordId: nil, payload: ["Name": "Twice"], sentAt: now - sentAgo, serverSentAt: now - sentAgo,
                             settledBy: now + settlesIn)
        }
        _ = try await store.journal.append([attempt(sentAgo: 8000, settlesIn: -4000),
                                             // Sent after the org started: the org may still apply it.
                                             scenario == .oneStillOpen ? attempt(sentAgo: 0, settlesIn: 60_000) : attempt(sentAgo: 4000, settlesIn: -1000)])
        try store.close()

        let outcome = try await bench.run(pipeline)
        let stage = outcome.report.stages[0]
        let entry = try await bench.entries("Accounts", pipeline).first { $0.soupEntryId == entryId }
        let inOrg = try await bench.query("SELECT Id FROM Account WHERE Name = 'Twice'")
        #expect(inOrg.count == (scenario == .bothApplied ? 2 : 1), "nothing sent again while undecided")
        switch scenario {
        case .bothSettled:
            #expect(outcome.exitCode == 0, "\(stage)")
            #expect(stage.counts["created"] == 1 && stage.counts["uncertain"] == 0, "counted once: \(stage.counts)")
            #expect(entry?["Id"]?.stringValue == made && entry?.isDirty == false)
        case .oneStillOpen:
            #expect(outcome.exitCode == 3 && stage.counts["uncertain"] == 1, "\(stage)")
            #expect(entry?.lastErrorCode == "UNCERTAIN" && entry?[SyncField.lastError]?.stringValue?.contains("another attempt") == true)
        case .bothApplied:
            #expect(outcome.exitCode == 3 && stage.counts["uncertain"] == 1, "\(stage)")
            #expect(entry?.lastErrorCode == "UNCERTAIN" && entry?[SyncField.lastError]?.stringValue?.contains(made) == true,
                    "the records are named: \(entry?[SyncField.lastError] ?? .null)")
        }
    }

    enum TwoAttempts: Sendable, CaseIterable {
        case bothSettled, oneStillOpen, bothApplied
    }

    /// Row locks refused through every retry round fail those records alone, with the org's
    /// error; the stage goes on with every other tree and ends `partial`, not failed.
    @Test(arguments: ["collections", "composite", "graph", "perTree"])
    func recordsStillLockedAfterTheRetriesFailAlone(strategy: String) async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let stages = #"[ { "id": "up", "type": "syncUp", "sync": "trees", "strategy": "\#(strategy)", "recordRetries": 1 } ]"#
        let pipeline = try bench.pipeline(syncs: SyncUpIntegrityTests.sync, stages: stages)
        try await SyncUpIntegrityTests.putTrees(30, prefix: "L", bench: bench, pipeline)
        try await bench.setFaults(["recordErrorRate": 0.3, "recordErrorCode": "UNABLE_TO_LOCK_ROW", "seed": 7])
        let first = try await bench.run(pipeline)
        let stage = first.report.stages[0]
        #expect(first.exitCode == 3, "\(strategy): \(stage)")
        #expect((stage.counts["failed"] ?? 0) > 0 && (stage.counts["created"] ?? 0) > 0, "\(strategy): \(stage.counts)")
        #expect((stage.counts["created"] ?? 0) + (stage.counts["failed"] ?? 0) == 120, "\(strategy): \(stage.counts)")
        let failed = try await bench.entries("Accounts", pipeline).filter(\.isDirty) + bench.entries("Contacts", pipeline).filter(\.isDirty)
        #expect(failed.allSatisfy { $0.lastErrorCode == "UNABLE_TO_LOCK_ROW" || $0.lastErrorCode == "PARENT_NOT_SYNCED"
            || $0.lastErrorCode == "PROCESSING_HALTED" }, "\(strategy): \(failed.map { $0.lastErrorCode ?? "none" })")
        try await bench.setFaults([:])
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0, "\(strategy): \(second.report.stages[0])")
        try await SyncUpIntegrityTests.expectExact(30, prefix: "L", bench: bench, pipeline)
    }

    static let edits = """
        [ { "syncName": "edits", "syncType": "syncUp", "soupName": "Accounts",
            "target": { "createFieldlist": ["Name"], "updateFieldlist": ["Name"] },
            "options": { "mergeMode": "LEAVE_IF_CHANGED" } } ]
        """

    /// Ten accounts from the org, each edited locally (as a nightly sync finds them).
    static func putEdits(_ bench: SyncHarness, _ pipeline: PipelineDefinition) async throws {
        var entries: [JSONObject] = []
        for index in 0..<10 {
            let entry = try await bench.serverRecord("Account", ["Name": .string("E\(index)")])
            entries.append(SyncHarness.flagged(entry, SyncField.locallyUpdated, ["Name": .string("E\(index)-edited")]))
        }
        try await bench.put(entries, into: "Accounts", pipeline)
    }

    /// The run's client with the `n`-th read of records by id (a Composite request without writes:
    /// the LEAVE_IF_CHANGED check, or the read of new dates) failing as through every retry.
    static func failingRead(_ n: Int) -> @Sendable (SalesforceClient) -> any OrgClient {
        failingReads(counted: Counter()) { $0 == n }
    }

    /// The run's client with the reads by id that `fails` picks (by their number, from 1) failing.
    static func failingReads(counted reads: Counter, _ fails: @escaping @Sendable (Int) -> Bool) -> @Sendable (SalesforceClient) -> any OrgClient {
        { base in
            InterceptingClient(base: base) { request, send in
                let body = String(decoding: request.body ?? [], as: UTF8.self)
                if request.kind == "composite" && !body.contains("PATCH") && fails(reads.next()) {
                    throw OrgClientError.gaveUp(attempts: 5, last: "the read timed out", answerLost: false)
                }
                return try await send()
            }
        }
    }

    /// LEAVE_IF_CHANGED: a conflict check that gets no answer leaves its trees for the next run
    /// (failed, with the reason) and the stage goes on; nothing is sent blind.
    @Test func aConflictCheckWithoutAnAnswerLeavesItsTreesForTheNextRun() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.edits, stages: #"[ { "id": "up", "type": "syncUp", "sync": "edits", "strategy": "composite" } ]"#)
        try await Self.putEdits(bench, pipeline)
        let first = try await bench.run(pipeline, answersOf: Self.failingRead(1))
        #expect(first.exitCode == 3 && first.report.stages[0].counts["failed"] == 10, "\(first.report.stages[0])")
        let entries = try await bench.entries("Accounts", pipeline)
        #expect(entries.allSatisfy { $0.isDirty && $0.lastErrorCode == "CONFLICT_CHECK_FAILED" })
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name LIKE 'E%-edited'").isEmpty, "nothing sent unchecked")
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0 && second.report.stages[0].counts["updated"] == 10, "\(second.report.stages[0])")
    }

    /// LEAVE_IF_CHANGED: writes whose new dates get no answer are not saved as if unchanged (the
    /// next sync up would take them for server changes): the run's next round confirms them from
    /// the journal with the org's dates, counted once, and nothing is sent again.
    @Test func writesWhoseDatesGetNoAnswerAreConfirmedFromTheJournal() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let pipeline = try bench.pipeline(syncs: Self.edits, stages: #"[ { "id": "up", "type": "syncUp", "sync": "edits", "strategy": "composite" } ]"#)
        try await Self.putEdits(bench, pipeline)
        let before = await bench.stats()["requests"]?["writes"]?.integerValue ?? 0
        let first = try await bench.run(pipeline, answersOf: Self.failingRead(2))
        #expect(first.exitCode == 0 && first.report.stages[0].counts["updated"] == 10, "\(first.report.stages[0])")
        #expect(first.report.stages[0].counts["uncertain"] == 0, "\(first.report.stages[0])")
        #expect(try await bench.query("SELECT Id FROM Account WHERE Name LIKE 'E%-edited'").count == 10)
        let entries = try await bench.entries("Accounts", pipeline)
        #expect(entries.allSatisfy { !$0.isDirty && $0["LastModifiedDate"] != nil }, "clean, with the org's dates")
        let writes = await bench.stats()["requests"]?["writes"]?.integerValue ?? 0
        #expect(writes == before + 1, "the edits were sent once, in one request")
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0 && second.report.stages[0].counts["conflicts"] == 0, "\(second.report.stages[0])")
        #expect(await bench.stats()["requests"]?["writes"]?.integerValue == writes, "nothing sent again")
    }

    /// LEAVE_IF_CHANGED against an org that answers no read: the checks that get no answer count
    /// toward the breaker, which stops the stage instead of failing every tree one by one.
    @Test func checksWithoutAnswersStopTheStage() async throws {
        let bench = try await SyncHarness()
        defer { Task { await bench.close() } }
        let stages = #"[ { "id": "up", "type": "syncUp", "sync": "edits", "strategy": "composite", "pageSize": 1, "stopAfterFailedRequests": 2, "stopAfterSilenceSeconds": 0 } ]"#
        let pipeline = try bench.pipeline(syncs: Self.edits, stages: stages)
        try await Self.putEdits(bench, pipeline)
        let reads = Counter()
        let first = try await bench.run(pipeline, answersOf: Self.failingReads(counted: reads) { _ in true })
        let stage = first.report.stages[0]
        #expect(first.exitCode == 1 && stage.error?.hasPrefix("the org stopped answering: 5 requests in a row were refused") == true, "\(stage)")
        #expect(reads.next() == 6, "two reads and three more, then the stop")
        #expect(stage.counts["failed"] == 4, "\(stage.counts)")
        let second = try await bench.run(pipeline)
        #expect(second.exitCode == 0 && second.report.stages[0].counts["updated"] == 10, "\(second.report.stages[0])")
    }
}

/// A count shared by concurrent requests.
final class Counter: Sendable {
    private let value = Mutex(0)

    /// The count after this call (1 for the first).
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
