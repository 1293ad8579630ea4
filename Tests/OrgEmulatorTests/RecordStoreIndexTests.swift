import GRDB
import Testing

@testable import OrgEmulator
import OrgEmulatorTesting

/// The emulator's record store finds a record's children through an index of their reference
/// field: a delete's cascade and a parent-children query's subquery seek them, instead of walking
/// every record of the child's type (which made deleting or paging through many parents
/// quadratic in the org's size).
struct RecordStoreIndexTests {
    @Test func childrenAreSoughtThroughTheirReferenceIndex() throws {
        let store = try RecordStore(path: nil)
        try store.queue.write { db in
            try RecordStore.indexReferenceFields(db, [("Account", "ParentId"), ("Contact", "AccountId")])
            for (type, field) in [("Account", "ParentId"), ("Contact", "AccountId")] {
                for count in [1, 3, 500] {
                    let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + RecordStore.childrenSQL(type: type, field: field, count: count),
                                                arguments: StatementArguments(Array(repeating: "001000000000001AAA", count: count)))
                        .map { $0["detail"] as String }
                    #expect(plan.contains { $0.contains("USING INDEX records_ref_") && $0.contains("\(type)_\(field)") }, "\(type).\(field): \(plan)")
                }
            }
        }
    }

    /// A lookup by an external id, unique or `idLookup` field seeks its object's index.
    @Test func lookupsSeekTheirIndex() throws {
        let store = try RecordStore(path: nil)
        try store.queue.write { db in
            _ = try RecordLookups(db, indexing: [("Account", "External_Id__c"), ("Contact", "Email")])
            for (type, field) in [("Account", "External_Id__c"), ("Contact", "Email")] {
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + RecordLookups.statement(type: type, field: field), arguments: ["x", "", 1])
                    .map { $0["detail"] as String }
                #expect(plan.contains { $0.contains("USING INDEX records_by_") && $0.contains("\(type)_\(field)") }, "\(type).\(field): \(plan)")
            }
        }
    }

    @Test func childrenComeBackInIdOrder() throws {
        let store = try RecordStore(path: nil)
        try store.queue.write { db in
            try RecordStore.indexReferenceFields(db, [("Contact", "AccountId")])
            for (id, parent) in [("003C", "001A"), ("003A", "001A"), ("003B", "001B"), ("003D", "001C")] {
                try RecordStore.save(db, StoredRecord(id: id, type: "Contact", fields: ["Id": .string(id), "AccountId": .string(parent)], isDeleted: false,
                                                      systemModstamp: 0))
            }
            let children = try RecordStore.fetchChildren(db, type: "Contact", field: "AccountId", parentIds: ["001B", "001A"])
            #expect(children.map(\.id) == ["003A", "003B", "003C"])
        }
    }
}

extension RecordStoreIndexTests {
    /// The sample seed's org indexes the references children are found by — not the owner,
    /// audit and record type fields every record holds.
    @Test func theSeedsReferencesAreIndexed() async throws {
        let engine = try OrgEngine(seed: try OrgSeed.load(path: SampleOrg.seedPath), databasePath: nil, accessToken: nil)
        let names = try await engine.store.queue.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'records_ref_%'")
        }
        for expected in ["records_ref_7_Contact_AccountId", "records_ref_7_Account_ParentId", "records_ref_4_Task_WhatId"] {
            #expect(names.contains(expected), "\(expected) in \(names)")
        }
        #expect(!names.contains { $0.hasSuffix("_CreatedById") || $0.hasSuffix("_OwnerId") || $0.hasSuffix("_RecordTypeId") }, "\(names)")
    }
}
