import Foundation
import GRDB
import JSON
import Testing

@testable import Soups

@Suite struct DatasetTests {
    static func record(_ i: Int) -> JSONValue {
        ["Name": .string("Account \(i)"), "Index": .integer(Int64(i)), "attributes": ["type": "Account"]]
    }

    @Test func unknownDatasetHasNoInfo() async throws {
        try await withStore { (store) async throws in
            #expect(try await store.datasets.info("nothing") == nil)
            #expect(try await store.datasets.records("nothing").isEmpty)
            await #expect(throws: SoupStoreError.unknownDataset("nothing")) {
                try await store.datasets.append("nothing", records: [Self.record(1)])
            }
        }
    }

    @Test func beginAppendReadFinish() async throws {
        try await withStore { (store) async throws in
            try await store.datasets.begin("accounts", runId: "run-1")
            #expect(try await store.datasets.info("accounts") == DatasetInfo(name: "accounts", runId: "run-1", count: 0, complete: false))
            try await store.datasets.append("accounts", records: (1...1000).map(Self.record))
            try await store.datasets.append("accounts", records: [])
            try await store.datasets.append("accounts", records: (1001...2000).map(Self.record))
            try await store.datasets.append("accounts", records: (2001...2500).map(Self.record))
            #expect(try await store.datasets.info("accounts") == DatasetInfo(name: "accounts", runId: "run-1", count: 2500, complete: false))
            try await store.datasets.finish("accounts")
            #expect(try await store.datasets.info("accounts")?.complete == true)

            let page = try await store.datasets.records("accounts", afterSeq: 998, limit: 4)
            #expect(page.map(\.seq) == [999, 1000, 1001, 1002])
            #expect(page.map(\.record) == (999...1002).map(Self.record))
            #expect(try await store.datasets.records("accounts", afterSeq: 2500).isEmpty)

            var batches: [[JSONValue]] = []
            for try await batch in store.datasets.batches(["accounts"], batchSize: 1000) { batches.append(batch) }
            #expect(batches.map(\.count) == [1000, 1000, 500])
            #expect(batches.flatMap { $0 } == (1...2500).map(Self.record))
            // Key order survives the store.
            #expect(batches[0][0].jsonString == #"{"Name":"Account 1","Index":1,"attributes":{"type":"Account"}}"#)

            // Batches that start small and double up to the batch size.
            batches = []
            for try await batch in store.datasets.batches(["accounts"], batchSize: 1000, firstBatchSize: 300) { batches.append(batch) }
            #expect(batches.map(\.count) == [300, 600, 1000, 600])
            #expect(batches.flatMap { $0 } == (1...2500).map(Self.record))
        }
    }

    @Test func beginAgainRestartsTheDataset() async throws {
        try await withStore { (store) async throws in
            try await store.datasets.begin("d", runId: "run-1")
            try await store.datasets.append("d", records: (1...10).map(Self.record))
            try await store.datasets.finish("d")
            try await store.datasets.begin("d", runId: "run-2")
            #expect(try await store.datasets.info("d") == DatasetInfo(name: "d", runId: "run-2", count: 0, complete: false))
            #expect(try await store.datasets.records("d").isEmpty)
            try await store.datasets.append("d", records: [Self.record(42)])
            let records = try await store.datasets.records("d")
            #expect(records.map(\.seq) == [1])
            #expect(records.map(\.record) == [Self.record(42)])
        }
    }

    @Test func datasetsAreIndependent() async throws {
        try await withStore { (store) async throws in
            try await store.datasets.begin("a", runId: "r")
            try await store.datasets.begin("b", runId: "r")
            try await store.datasets.append("a", records: [Self.record(1), Self.record(2)])
            try await store.datasets.append("b", records: [Self.record(3)])
            try await store.datasets.begin("a", runId: "r2")
            #expect(try await store.datasets.records("b").map(\.record) == [Self.record(3)])
            #expect(try await store.datasets.info("b")?.count == 1)
            #expect(try await store.datasets.info("a")?.count == 0)
        }
    }

    @Test func emptyDatasetStreamsNothing() async throws {
        try await withStore { (store) async throws in
            try await store.datasets.begin("empty", runId: "r")
            try await store.datasets.finish("empty")
            var batches = 0
            for try await _ in store.datasets.batches(["empty"]) { batches += 1 }
            #expect(batches == 0)
            #expect(try await store.datasets.info("empty") == DatasetInfo(name: "empty", runId: "r", count: 0, complete: true))
        }
    }

    @Test func datasetsLiveInTheirOwnFileAndDryRunCopiesTakeThem() async throws {
        try await withStore { (store, directory) async throws in
            try await store.datasets.begin("d", runId: "r")
            try await store.datasets.append("d", records: [Self.record(1)])
            try await store.datasets.finish("d")
            #expect(FileManager.default.fileExists(atPath: SoupStore.datasetsPath(of: store.path)))
            let main = try DatabaseQueue(path: store.path)
            #expect(try await main.read { db in try db.tableExists("dataset_records") } == false)
            try main.close()
            let copyPath = directory.appendingPathComponent("copy.sqlite").path
            try store.copy(to: copyPath)
            let copy = try SoupStore.openForReading(path: copyPath)
            #expect(try await copy.datasets.records("d").map(\.record) == [Self.record(1)])
            try copy.close()
        }
    }

    @Test func storesThatKeptDatasetsInTheMainFileHaveThemMoved() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("old.sqlite").path
        let old = try DatabaseQueue(path: path)
        try await old.write { db in
            try db.execute(sql: """
                CREATE TABLE datasets (name TEXT PRIMARY KEY, runId TEXT NOT NULL, count INTEGER NOT NULL,
                  complete INTEGER NOT NULL, createdAt INTEGER NOT NULL);
                CREATE TABLE dataset_records (dataset TEXT NOT NULL, seq INTEGER NOT NULL, record TEXT NOT NULL,
                  PRIMARY KEY (dataset, seq)) WITHOUT ROWID;
                INSERT INTO datasets VALUES ('accounts', 'run-0', 6001, 1, 0);
                """)
            for seq in 1...6001 {
                try db.execute(sql: "INSERT INTO dataset_records VALUES ('accounts', ?, ?)",
                               arguments: [seq, Self.record(seq).jsonString])
            }
        }
        try old.close()
        let store = try SoupStore(path: path)
        #expect(try await store.datasets.info("accounts") == DatasetInfo(name: "accounts", runId: "run-0", count: 6001, complete: true))
        #expect(try await store.datasets.records("accounts", afterSeq: 5999, limit: 10).map(\.record) == [Self.record(6000), Self.record(6001)])
        try store.close()
        let main = try DatabaseQueue(path: path)
        #expect(try await main.read { db in try db.tableExists("datasets") || db.tableExists("dataset_records") } == false)
        try main.close()
    }

    @Test func datasetsSurviveReopening() async throws {
        try await withStore { (store) async throws in
            try await store.datasets.begin("d", runId: "r")
            try await store.datasets.append("d", records: [Self.record(1), "plain string", 12, nil, [1, 2]])
            try await store.datasets.finish("d")
            let reader = try SoupStore.openForReading(path: store.path)
            #expect(try await reader.datasets.records("d").map(\.record) == [Self.record(1), "plain string", 12, nil, [1, 2]])
            try reader.close()
        }
    }
}

@Suite struct RunsTests {
    static func run(_ id: String, startedAt: String, status: String = "running", exitCode: Int? = nil) -> StoredRun {
        StoredRun(
            id: id, pipeline: "accounts-contacts", status: status, exitCode: exitCode, startedAt: startedAt,
            finishedAt: exitCode == nil ? nil : startedAt, reportDir: exitCode == nil ? nil : "/tmp/reports/\(id)",
            record: ["runId": .string(id), "stages": [["id": "up", "counts": ["created": 3]]]])
    }

    @Test func saveAndListOldestFirst() async throws {
        try await withStore { (store) async throws in
            #expect(try await store.runs.all().isEmpty)
            let second = Self.run("20261122T061500Z-bbbbbb", startedAt: "2026-11-22T06:15:00.000Z")
            let first = Self.run("20261121T061500Z-aaaaaa", startedAt: "2026-11-21T06:15:00.000Z", status: "succeeded", exitCode: 0)
            try await store.runs.save(second)
            try await store.runs.save(first)
            #expect(try await store.runs.all() == [first, second])
        }
    }

    @Test func savingAgainReplacesTheRun() async throws {
        try await withStore { (store) async throws in
            var run = Self.run("20261122T061500Z-abcdef", startedAt: "2026-11-22T06:15:00.000Z")
            try await store.runs.save(run)
            run.status = "partial"
            run.exitCode = 3
            run.finishedAt = "2026-11-22T06:16:00.000Z"
            run.reportDir = "/reports/x"
            run.record = ["status": "partial", "exitCode": 3]
            try await store.runs.save(run)
            let runs = try await store.runs.all()
            #expect(runs == [run])
            #expect(runs[0].exitCode == 3)
            #expect(runs[0].record["status"] == "partial")
        }
    }

    @Test func nilColumnsRoundTrip() async throws {
        try await withStore { (store) async throws in
            let run = Self.run("r", startedAt: "2026-01-01T00:00:00.000Z")
            try await store.runs.save(run)
            let read = try #require(try await store.runs.all().first)
            #expect(read.exitCode == nil)
            #expect(read.finishedAt == nil)
            #expect(read.reportDir == nil)
            #expect(read.record == run.record)
        }
    }
}
