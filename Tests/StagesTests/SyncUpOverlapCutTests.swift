import JSON
import Soups
import Testing

@testable import Stages

/// Where a page of several requests is cut into parts sent and saved side by side: the parts
/// as even in writes as the requests allow, so each part's save hides behind the next's writes,
/// and the last (whose save hides behind nothing) the smallest.
struct SyncUpOverlapCutTests {
    @Test func sevenRequestsOfTreesSplitIntoFourPartsTheLastSmall() {
        // 1,000 trees of 1 + 5: six full Composite requests and one of 40 trees. [1 | 2 | 2 | 2]
        // costs as much, but its last part's save (and read of new dates) is five times longer.
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 960, count: 6) + [240]) == [2, 4, 6])
    }

    @Test func aSmallLastRequestStillMakesAPartOfItsOwn() {
        // Two full requests and a small one: three parts end sooner than two of 960 and 1,020.
        #expect(SyncUpEngine.quickestCut(writes: [960, 960, 60]) == [1, 2])
        #expect(SyncUpEngine.quickestCut(writes: [960, 960]) == [1])
    }

    @Test func noMoreThanFourParts() {
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 1000, count: 12)) == [3, 6, 9])
        // Thirty Collections requests of 200: the last part a request smaller than the others.
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 200, count: 30)) == [8, 16, 24])
    }

    @Test func ofCutsAsQuickTheOneWithFewerParts() {
        // Whole, 100 + 100; in two parts, 50 + 50 + 50 for the second part's own cost + 50.
        #expect(SyncUpEngine.quickestCut(writes: [50, 50]) == [])
    }

    @Test func aPageOfAFewRecordsIsNotCut() {
        // A part costs a wait for the one before it and a read of new dates of its own: more
        // than these pages' writes could hide.
        #expect(SyncUpEngine.quickestCut(writes: [1, 1, 1, 1]) == [])
        #expect(SyncUpEngine.quickestCut(writes: [10, 10]) == [])
    }

    @Test func aPageOfOneRequestOrNoneIsNotCut() {
        #expect(SyncUpEngine.quickestCut(writes: []) == [])
        #expect(SyncUpEngine.quickestCut(writes: [960]) == [])
    }

    @Test func aPageOfThousandsOfSingleRecordRequestsIsCutEvenly() {
        // One request a record (`rest`): 3,000 requests, cut in quarters (among 64 evenly
        // spaced requests, which these quarters are).
        #expect(SyncUpEngine.quickestCut(writes: Array(repeating: 1, count: 3000)) == [750, 1500, 2250])
    }

    /// The cut is found from writes planned without their fields: the same writes, packed into
    /// the same requests by every transport, as the page's own plan — new, existing and upserted
    /// parents, children created and updated.
    @Test func writesPlannedWithoutFieldsPackAsThePlanDoes() {
        func record(_ soup: String, _ type: String, _ fields: JSONObject, externalId: String? = nil) -> SyncUpRecord {
            SyncUpRecord(soup: soup, entry: fields, objectType: type, idField: "Id", modificationDateField: "LastModifiedDate",
                         externalIdField: externalId, createFields: nil, updateFields: nil)
        }
        var trees = (0..<300).map { index in
            // Every third parent is in the org already (updated), every fifth new one is upserted.
            let existing = index % 3 == 0
            let parentId = existing ? "001000000000\(index)AAA" : "local_p\(index)"
            var parent: JSONObject = ["Id": .string(parentId), "Name": .string("Account \(index)"), "__local__": .bool(true),
                                      "_soupEntryId": .integer(Int64(index + 1))]
            parent[existing ? "__locally_updated__" : "__locally_created__"] = .bool(true)
            let upserted = !existing && index % 5 == 0
            if upserted { parent["External_Id__c"] = .string("X-\(index)") }
            let children = (0..<(index % 7)).map { child -> SyncUpRecord in
                let fields: JSONObject = child == 0
                    ? ["Id": .string("003000000000\(index)AAA"), "LastName": .string("Old"), "AccountId": .string(parentId), "__local__": .bool(true),
                       "__locally_updated__": .bool(true), "_soupEntryId": .integer(Int64(10_000 + index * 10 + child))]
                    : ["Id": .string("local_c\(index)_\(child)"), "LastName": .string("New \(child)"), "AccountId": .string(parentId), "__local__": .bool(true),
                       "__locally_created__": .bool(true), "_soupEntryId": .integer(Int64(10_000 + index * 10 + child))]
                return record("Contacts", "Contact", fields)
            }
            return SyncUpTree(parent: record("Accounts", "Account", parent, externalId: upserted ? "External_Id__c" : nil), children: children,
                              relationship: .lookup, parentIdField: "AccountId", childRelationshipName: "Contacts")
        }
        var shapes = trees
        let full = trees.indices.map { SyncUpPlanner().plan(&trees[$0], index: $0).operations }
        let shape = shapes.indices.map { SyncUpPlanner(payloads: false).plan(&shapes[$0], index: $0).operations }
        #expect(Set(full.joined().map { "\($0.kind)" }) == ["create", "update", "upsert"])
        #expect(full.joined().contains { $0.fields.keys.contains { $0 != "AccountId" } })
        // Without payloads a write carries at most its existing parent's id.
        #expect(shape.joined().allSatisfy { $0.fields.keys.allSatisfy { $0 == "AccountId" } })
        func summary(_ operations: [[SyncUpOperation]]) -> [String] {
            operations.joined().map {
                "\($0.key.referenceId) \($0.kind) \($0.objectType) \($0.externalIdValue ?? "-") \($0.parentLink?.parent.referenceId ?? "-")"
            }
        }
        #expect(summary(shape) == summary(full))
        for transport in SyncUpTransport.allCases {
            func requests(_ operations: [[SyncUpOperation]]) -> [[[String]]] {
                SyncUpPacker(transport: transport).phases(operations).map { phase in
                    phase.map { request in request.operations.map(\.key.referenceId) }
                }
            }
            #expect(requests(shape) == requests(full), "\(transport)")
        }
        #expect(SyncUpPacker(transport: .collections).phases(full).first?.count ?? 0 > 1)
    }
}
