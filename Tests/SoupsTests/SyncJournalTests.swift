import Foundation
import JSON
import Testing

@testable import Soups

/// The sync journal: entries written many to an INSERT come back with their own ids and values;
/// settled ids leave in ranges and one by one, nothing else with them.
@Suite struct SyncJournalTests {
    func entry(_ index: Int) -> SyncJournalEntry {
        SyncJournalEntry(
            syncName: "up", soupName: index.isMultiple(of: 2) ? "A" : "B", entryId: Int64(1000 + index),
            operation: index.isMultiple(of: 3) ? .update : .create, objectType: "Account", recordId: index.isMultiple(of: 3) ? "001\(index)" : nil,
            payload: ["Name": .string("Name \(index)"), "NumberOfEmployees": .integer(Int64(index))], sentAt: Int64(index),
            serverSentAt: index.isMultiple(of: 4) ? nil : Int64(index + 1), settledBy: index.isMultiple(of: 5) ? nil : Int64(index + 2),
            link: index.isMultiple(of: 7) ? SyncJournalEntry.Link(field: "ParentId", soupName: "A", entryId: Int64(index)) : nil,
            bulkJobId: index.isMultiple(of: 11) ? "750\(index)" : nil)
    }

    @Test func entriesWrittenTogetherKeepTheirIdsAndValues() async throws {
        try await withStore { store in
            // More than one INSERT's worth, and a last one of another size.
            let count = SyncJournal.rowsPerInsert * 2 + 9
            let first = try await store.journal.append([entry(-1)])
            let ids = try await store.journal.append((0..<count).map(entry))
            #expect(ids == Array((first[0] + 1)...(first[0] + Int64(count))))
            let stored = try await store.journal.entries(of: "up")
            #expect(stored.count == count + 1)
            for (index, id) in ids.enumerated() {
                var expected = entry(index)
                expected.id = id
                #expect(stored.first { $0.id == id } == expected, "entry \(index)")
            }
        }
    }

    @Test func settledIdsLeaveInRangesAndAlone() async throws {
        try await withStore { store in
            let ids = try await store.journal.append((0..<200).map(entry))
            // Two long runs, short runs, single ids, a repeat, out of order — and ids never written.
            let settled = Array(ids[10..<60]) + Array(ids[100..<103]) + [ids[150], ids[152], ids[11], ids[199]] + Array(ids[120..<140]).reversed()
                + [ids[199] + 1, ids[199] + 50]
            try await store.journal.remove(ids: settled)
            let left = Set(try await store.journal.entries(of: "up").map(\.id))
            #expect(left == Set(ids).subtracting(settled))
        }
    }
}
