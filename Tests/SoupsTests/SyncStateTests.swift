import Foundation
import JSON
import Testing

@testable import Soups

@Suite struct SyncStateTests {
    static func downSync(_ name: String = "DownSync") -> SyncState {
        SyncState(
            name: name, type: .syncDown, soupName: "Accounts",
            target: entry(["type": "soql", "query": "SELECT Id, Name FROM Account"]),
            options: entry(["mergeMode": "LEAVE_IF_CHANGED"]))
    }

    static func upSync(_ name: String = "UpSync") -> SyncState {
        SyncState(
            name: name, type: .syncUp, soupName: "Accounts",
            target: entry(["createFieldlist": ["Name"], "updateFieldlist": ["Name"]]),
            options: entry(["fieldlist": ["Id", "Name"], "mergeMode": "OVERWRITE"]))
    }

    @Test func createGivesIdsAndTheNewState() async throws {
        try await withStore { (store) async throws in
            let down = try await store.syncs.create(Self.downSync())
            let up = try await store.syncs.create(Self.upSync())
            #expect(down.id == 1)
            #expect(up.id == 2)
            #expect(down.status == .new)
            #expect(down.progress == 0)
            #expect(down.totalSize == -1)
            #expect(down.maxTimeStamp == -1)
            #expect(down.startTime == -1)
            #expect(down.endTime == -1)
            #expect(down.error == "")
            #expect(try await store.syncs.state(named: "DownSync") == down)
            #expect(try await store.syncs.state(named: "UpSync") == up)
            #expect(try await store.syncs.all() == [down, up])
        }
    }

    @Test func createOfAnExistingNameReturnsItUnchanged() async throws {
        try await withStore { (store) async throws in
            var original = try await store.syncs.create(Self.downSync())
            original.transition(to: .running, at: 1_000)
            original.progress = 40
            try await store.syncs.save(original)
            var other = Self.downSync()
            other.target = entry(["type": "soql", "query": "SELECT Id FROM Contact"])
            let again = try await store.syncs.create(other)
            #expect(again == original)
            #expect(again.target["query"] == "SELECT Id, Name FROM Account")
            #expect(try await store.syncs.all().count == 1)
        }
    }

    @Test func createWithFailIfExistsThrows() async throws {
        try await withStore { (store) async throws in
            try await store.syncs.create(Self.downSync())
            await #expect(throws: SoupStoreError.duplicateSync("DownSync")) {
                try await store.syncs.create(Self.downSync(), failIfExists: true)
            }
            #expect(SoupStoreError.duplicateSync("DownSync").description == "there is already a sync with name: DownSync")
            let fresh = try await store.syncs.create(Self.upSync(), failIfExists: true)
            #expect(fresh.id == 2)
        }
    }

    @Test func lookupOfAnUnknownSyncFails() async throws {
        try await withStore { (store) async throws in
            await #expect(throws: SoupStoreError.unknownSync("Missing")) { try await store.syncs.state(named: "Missing") }
            #expect(SoupStoreError.unknownSync("Missing").description == "sync Missing does not exist")
            let syncs = try await store.syncs.all()
            #expect(syncs.isEmpty)
        }
    }

    @Test func saveRoundTripsEveryField() async throws {
        try await withStore { (store) async throws in
            var sync = try await store.syncs.create(Self.downSync())
            sync.transition(to: .running, at: 1_700_000_000_000)
            sync.progress = 100
            sync.totalSize = 1234
            sync.maxTimeStamp = 1_699_999_999_000
            sync.transition(to: .failed, at: 1_700_000_005_000)
            sync.error = #"{"message":"timeout"}"#
            sync.options["mergeMode"] = "OVERWRITE"
            sync.target["query"] = "SELECT Id FROM Account WHERE IsDeleted = false"
            try await store.syncs.save(sync)
            let read = try await store.syncs.state(named: "DownSync")
            #expect(read == sync)
            #expect(read.status == .failed)
            #expect(read.startTime == 1_700_000_000_000)
            #expect(read.endTime == 1_700_000_005_000)
            #expect(read.options["mergeMode"] == "OVERWRITE")
        }
    }

    @Test func saveOfAnUnknownSyncFails() async throws {
        try await withStore { (store) async throws in
            var ghost = Self.downSync("Ghost")
            ghost.id = 99
            await #expect(throws: SoupStoreError.unknownSync("Ghost")) { try await store.syncs.save(ghost) }
        }
    }

    @Test func stopOrphanedSyncsStopsOnlyRunningOnes() async throws {
        try await withStore { (store) async throws in
            var a = try await store.syncs.create(Self.downSync("A"))
            var b = try await store.syncs.create(Self.upSync("B"))
            var c = try await store.syncs.create(Self.downSync("C"))
            let d = try await store.syncs.create(Self.downSync("D"))
            a.transition(to: .running, at: 100)
            b.transition(to: .running, at: 200)
            c.transition(to: .running, at: 300)
            c.transition(to: .done, at: 400)
            for sync in [a, b, c] { try await store.syncs.save(sync) }
            let stopped = try await store.syncs.stopOrphaned(at: 5_000)
            #expect(stopped == ["A", "B"])
            let all = try await store.syncs.all()
            #expect(all.map(\.status) == [.stopped, .stopped, .done, .new])
            #expect(all.map(\.startTime) == [100, 200, 300, -1])
            #expect(all.map(\.endTime) == [5_000, 5_000, 400, -1])
            #expect(all[3] == d)
            #expect(try await store.syncs.stopOrphaned(at: 6_000) == [])
        }
    }

    @Test func transitionTimeRules() {
        var sync = Self.downSync()
        // NEW → RUNNING sets startTime, endTime stays unset.
        sync.transition(to: .running, at: 1_000)
        #expect(sync.status == .running)
        #expect(sync.isRunning)
        #expect(sync.startTime == 1_000)
        #expect(sync.endTime == -1)
        // RUNNING → RUNNING keeps the start.
        sync.transition(to: .running, at: 1_500)
        #expect(sync.startTime == 1_000)
        // RUNNING → DONE sets endTime.
        sync.transition(to: .done, at: 2_000)
        #expect(sync.status == .done)
        #expect(!sync.isRunning)
        #expect(sync.startTime == 1_000)
        #expect(sync.endTime == 2_000)
        // DONE → RUNNING starts anew and clears endTime.
        sync.transition(to: .running, at: 3_000)
        #expect(sync.startTime == 3_000)
        #expect(sync.endTime == -1)
        // RUNNING → FAILED and RUNNING → STOPPED set endTime too.
        sync.transition(to: .failed, at: 4_000)
        #expect(sync.endTime == 4_000)
        sync.transition(to: .running, at: 5_000)
        sync.transition(to: .stopped, at: 6_000)
        #expect(sync.status == .stopped)
        #expect(sync.startTime == 5_000)
        #expect(sync.endTime == 6_000)
        // Leaving a non-running state touches no time.
        sync.transition(to: .done, at: 7_000)
        #expect(sync.startTime == 5_000)
        #expect(sync.endTime == 6_000)
        var fresh = Self.downSync()
        fresh.transition(to: .done, at: 8_000)
        #expect(fresh.startTime == -1)
        #expect(fresh.endTime == -1)
        // RUNNING → NEW (a reset) leaves endTime unset.
        var reset = Self.downSync()
        reset.transition(to: .running, at: 9_000)
        reset.transition(to: .new, at: 9_500)
        #expect(reset.status == .new)
        #expect(reset.endTime == -1)
    }

    @Test func mobileSDKJSONShape() throws {
        var sync = Self.upSync()
        sync.id = 3
        sync.transition(to: .running, at: 10)
        sync.transition(to: .done, at: 20)
        sync.progress = 100
        sync.totalSize = 7
        let json = sync.json
        let object = try #require(json.objectValue)
        #expect(object.keys == [
            "_soupEntryId", "name", "type", "target", "options", "soupName", "status", "progress", "totalSize",
            "maxTimeStamp", "startTime", "endTime", "error",
        ])
        #expect(json.jsonString == """
            {"_soupEntryId":3,"name":"UpSync","type":"syncUp","target":{"createFieldlist":["Name"],"updateFieldlist":["Name"]},\
            "options":{"fieldlist":["Id","Name"],"mergeMode":"OVERWRITE"},"soupName":"Accounts","status":"DONE","progress":100,\
            "totalSize":7,"maxTimeStamp":-1,"startTime":10,"endTime":20,"error":""}
            """)
    }
}
