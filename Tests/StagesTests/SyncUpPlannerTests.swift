import JSON
import Soups
import Testing

@testable import Stages

/// The sync-up planner on its own (no store, no org): which writes a tree's flags call for, in
/// which order, and what is settled without a request — Mobile Sync's parent-children rules.
struct SyncUpPlannerTests {
    /// A soup entry with the given flags; `id` a server id (`001…`), a `local_` id or none.
    static func record(_ soup: String, _ type: String?, id: String?, entryId: Int64, created: Bool = false, updated: Bool = false,
                       deleted: Bool = false, fields: JSONObject = [:], externalIdField: String? = nil) -> SyncUpRecord {
        var entry = fields
        entry["Id"] = id.map(JSONValue.string) ?? .null
        entry[SyncField.soupEntryId] = .integer(entryId)
        entry[SyncField.local] = .bool(created || updated || deleted)
        entry[SyncField.locallyCreated] = .bool(created)
        entry[SyncField.locallyUpdated] = .bool(updated)
        entry[SyncField.locallyDeleted] = .bool(deleted)
        if let type { entry["attributes"] = ["type": .string(type)] }
        return SyncUpRecord(soup: soup, entry: entry, objectType: type, idField: "Id", modificationDateField: "LastModifiedDate",
                            externalIdField: externalIdField, createFields: nil, updateFields: nil)
    }

    static func account(id: String?, entryId: Int64 = 1, created: Bool = false, updated: Bool = false, deleted: Bool = false) -> SyncUpRecord {
        record("Accounts", "Account", id: id, entryId: entryId, created: created, updated: updated, deleted: deleted, fields: ["Name": "Acme"])
    }

    static func contact(id: String?, entryId: Int64, created: Bool = false, updated: Bool = false, deleted: Bool = false,
                        accountId: String? = nil) -> SyncUpRecord {
        record("Contacts", "Contact", id: id, entryId: entryId, created: created, updated: updated, deleted: deleted,
               fields: ["LastName": .string("C\(entryId)"), "AccountId": accountId.map(JSONValue.string) ?? .null])
    }

    static func tree(_ parent: SyncUpRecord, _ children: [SyncUpRecord], _ relationship: RelationshipType = .masterDetail) -> SyncUpTree {
        SyncUpTree(parent: parent, children: children, relationship: relationship, parentIdField: "AccountId", childRelationshipName: "Contacts")
    }

    @Test func aNewParentGoesFirstAndEveryChildFollowsItLinkedToItsNewId() {
        var tree = Self.tree(Self.account(id: "local_1", created: true), [
            Self.contact(id: "local_2", entryId: 2, created: true, accountId: "local_1"),
            Self.contact(id: nil, entryId: 3, accountId: "local_1"),
            Self.contact(id: "003000000000001AAA", entryId: 4, accountId: "local_1"),
        ])
        let plan = SyncUpPlanner().plan(&tree, index: 7)
        #expect(plan.settled.isEmpty)
        #expect(plan.operations.map(\.kind) == [.create, .create, .create, .update])
        #expect(plan.operations.map(\.key) == [RecordKey(tree: 7, child: nil), RecordKey(tree: 7, child: 0), RecordKey(tree: 7, child: 1),
                                              RecordKey(tree: 7, child: 2)])
        #expect(plan.operations[0].fields["Name"] == "Acme" && plan.operations[0].fields["Id"] == nil)
        for child in plan.operations.dropFirst() {
            // The link is filled from the parent's answer; the local id never leaves.
            #expect(child.parentLink?.field == "AccountId" && child.parentLink?.parent == RecordKey(tree: 7, child: nil))
            #expect(child.fields["AccountId"] == nil)
        }
        #expect(plan.operations[3].recordId == "003000000000001AAA")
    }

    @Test func aChildOfAParentInTheOrgCarriesTheParentsId() {
        var tree = Self.tree(Self.account(id: "001000000000001AAA"), [
            Self.contact(id: nil, entryId: 2, created: true),
            Self.contact(id: "003000000000002AAA", entryId: 3),
        ], .lookup)
        let plan = SyncUpPlanner().plan(&tree, index: 0)
        // The clean parent and the clean child send nothing.
        #expect(plan.operations.map(\.kind) == [.create])
        #expect(plan.operations[0].fields["AccountId"] == "001000000000001AAA")
        #expect(plan.operations[0].parentLink == nil)
        #expect(tree.children[0].entry["AccountId"] == "001000000000001AAA")
    }

    @Test func aDeletedMasterDetailParentLeavesItsChildrenToTheCascadeAndGoesLast() {
        var tree = Self.tree(Self.account(id: "001000000000001AAA", deleted: true), [
            Self.contact(id: "003000000000002AAA", entryId: 2, updated: true, accountId: "001000000000001AAA"),
        ])
        let plan = SyncUpPlanner().plan(&tree, index: 0)
        #expect(plan.operations.map(\.kind) == [.delete])
        #expect(plan.operations[0].recordId == "001000000000001AAA" && plan.operations[0].fields.isEmpty)
        #expect(plan.settled.isEmpty)
    }

    @Test func aDeletedLookupParentIsDeletedAfterItsChildrensWrites() {
        var tree = Self.tree(Self.account(id: "001000000000001AAA", deleted: true), [
            Self.contact(id: "003000000000002AAA", entryId: 2, updated: true, accountId: "001000000000001AAA"),
        ], .lookup)
        let plan = SyncUpPlanner().plan(&tree, index: 0)
        #expect(plan.operations.map(\.kind) == [.update, .delete])
        #expect(plan.operations.map(\.key.child) == [0, nil])
    }

    @Test func aParentCreatedAndDeletedLocallyIsDiscardedWithoutARequest() {
        var masterDetail = Self.tree(Self.account(id: "local_1", created: true, deleted: true), [
            Self.contact(id: "local_2", entryId: 2, created: true, accountId: "local_1"),
        ])
        let discarded = SyncUpPlanner().plan(&masterDetail, index: 0)
        #expect(discarded.operations.isEmpty)
        #expect(discarded.settled.count == 2)
        #expect(discarded.settled.values.allSatisfy { if case .discarded = $0 { true } else { false } })

        // Under a lookup the child outlives it, without the link.
        var lookup = Self.tree(Self.account(id: "local_1", created: true, deleted: true), [
            Self.contact(id: "local_2", entryId: 2, created: true, accountId: "local_1"),
        ], .lookup)
        let kept = SyncUpPlanner().plan(&lookup, index: 0)
        #expect(kept.operations.map(\.kind) == [.create])
        #expect(kept.operations[0].fields["AccountId"] == .null && kept.operations[0].parentLink == nil)
        #expect(lookup.children[0].entry["AccountId"] == .null)
    }

    @Test func aRecordWithoutAnObjectTypeFailsWithoutARequest() {
        var tree = Self.tree(Self.record("Accounts", nil, id: "local_1", entryId: 1, created: true), [
            Self.record("Contacts", nil, id: "local_2", entryId: 2, created: true),
        ], .lookup)
        let plan = SyncUpPlanner().plan(&tree, index: 3)
        #expect(plan.operations.isEmpty)
        for key in [RecordKey(tree: 3, child: nil), RecordKey(tree: 3, child: 0)] {
            guard case .failed(let error)? = plan.settled[key] else {
                Issue.record("\(key) not failed: \(String(describing: plan.settled[key]))")
                continue
            }
            #expect(error.json["errorCode"] == "INVALID_TYPE")
        }
    }

    @Test func aCreateWithAnExternalIdIsAnUpsertOnIt() {
        var tree = SyncUpTree(parent: Self.record("Accounts", "Account", id: "local_1", entryId: 1, created: true,
                                                  fields: ["Name": "Acme", "External_Id__c": "A-1"], externalIdField: "External_Id__c"))
        let plan = SyncUpPlanner().plan(&tree, index: 0)
        #expect(plan.operations.count == 1)
        let upsert = plan.operations[0]
        #expect(upsert.kind == .upsert && upsert.externalIdField == "External_Id__c" && upsert.externalIdValue == "A-1")
        #expect(upsert.fields["External_Id__c"] == nil && upsert.fields["Name"] == "Acme")
        #expect(upsert.restPath == "/sobjects/Account/External_Id__c/A-1")

        // A `local_` placeholder in the external id field is no key: a plain create.
        var placeholder = SyncUpTree(parent: Self.record("Accounts", "Account", id: "local_1", entryId: 1, created: true,
                                                         fields: ["External_Id__c": "local_9"], externalIdField: "External_Id__c"))
        #expect(SyncUpPlanner().plan(&placeholder, index: 0).operations.map(\.kind) == [.create])
    }

    @Test func withoutPayloadsAPlanIsTheWritesShapeOnly() {
        var tree = Self.tree(Self.account(id: "local_1", created: true), [Self.contact(id: "local_2", entryId: 2, created: true)])
        let plan = SyncUpPlanner(payloads: false).plan(&tree, index: 0)
        #expect(plan.operations.map(\.kind) == [.create, .create])
        #expect(plan.operations.allSatisfy { $0.fields.isEmpty })
        #expect(plan.operations[1].parentLink?.parent == RecordKey(tree: 0, child: nil))
    }
}
