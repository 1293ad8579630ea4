import JSON
import Soups
import Synchronization

/// Parent-children generalised (`"type": "graph"`): any number of related soups in one sync —
/// several levels, self-lookups (`Account.ParentId`), polymorphic lookups (`Task.WhatId` into
/// accounts or opportunities). A reference field holding a `local_` id is resolved to that entry's
/// server id once the org created it, in any soup; nothing is sent with a `local_` id in it.
///
/// It syncs through passes, one per object in dependency order, repeated while a pass made
/// records ready for the next (a self-lookup's levels, one round each): each record goes once its
/// references hold server ids, so a parent is always created before the records that point at it.
/// Deletes go last, children first. Only a true cycle is broken, by a create without the cycle's
/// references and an update once they exist. A record whose reference never resolves (its target
/// failed, is uncertain, or no listed soup holds it) is not sent and is reported
/// `UNRESOLVED_REFERENCE`.
public struct GraphSyncUpTarget: SyncUpTarget {
    /// A lookup from one object to others.
    public struct Reference: Sendable, Equatable {
        public var field: String
        /// The soups the field may point into (several for a polymorphic lookup).
        public var soups: [String]
        public var relationship: RelationshipType

        public init(field: String, soups: [String], relationship: RelationshipType = .lookup) {
            self.field = field
            self.soups = soups
            self.relationship = relationship
        }
    }

    /// One object of the graph: its soup, how its records map to the org, its references.
    public struct Object: Sendable {
        public var soupName: String
        public var sobjectType: String
        public var idFieldName = "Id"
        public var modificationDateFieldName = "LastModifiedDate"
        public var externalIdFieldName: String?
        public var createFieldlist: [String]?
        public var updateFieldlist: [String]?
        public var references: [Reference] = []

        public init(soupName: String, sobjectType: String, references: [Reference] = []) {
            self.soupName = soupName
            self.sobjectType = sobjectType
            self.references = references
        }

        /// The soups of `objects` whose records this object's field lists name by key: the
        /// relationship of `Account.External_Id__c` is an `Account` object, of `Region__r.Code__c`
        /// a `Region__c` one.
        func keyedParents(among objects: [Object]) -> [String] {
            let relationships = Set(((createFieldlist ?? []) + (updateFieldlist ?? [])).compactMap { SyncUpRecord.parentReference($0)?.relationship })
            return objects.filter { other in
                relationships.contains(other.sobjectType)
                    || other.sobjectType.hasSuffix("__c") && relationships.contains(other.sobjectType.dropLast(3) + "__r")
            }.map(\.soupName)
        }
    }

    /// The objects, parents before the objects that reference them.
    public let objects: [Object]
    /// The passes' shared state of the current run, for reporting what they left.
    private let run = CurrentRun()

    final class CurrentRun: Sendable {
        let attempts = Mutex<SyncUpAttempts?>(nil)
    }

    /// The graph of `objects`, ordered so referenced objects come first (objects in a cycle keep
    /// their given order).
    public init(objects: [Object]) {
        self.objects = Self.dependencyOrder(objects)
    }

    public var preferredTransport: SyncUpTransport { .collections }
    public var hasChildren: Bool { false }

    public var references: [SyncUpReference] {
        objects.flatMap { object in
            object.references.flatMap { reference in
                reference.soups.map { SyncUpReference(soup: object.soupName, field: reference.field, referencedSoup: $0) }
            }
        }
    }

    public func idFieldName(inSoup soup: String) -> String { object(soup)?.idFieldName ?? "Id" }
    public func externalIdFieldName(inSoup soup: String) -> String? { object(soup)?.externalIdFieldName }
    public func modificationDateFieldName(inSoup soup: String) -> String { object(soup)?.modificationDateFieldName ?? "LastModifiedDate" }

    func object(_ soup: String) -> Object? { objects.first { $0.soupName == soup } }

    /// One round: every object's records that are ready, parents first; the updates of fields a
    /// cycle's creates left out; then deletes, children first. After a round that took nothing, the
    /// next breaks a cycle: the first object whose waiting records wait only on other waiting
    /// records creates them without those references, which a later round's update sends.
    public func passes(sharing attempts: SyncUpAttempts) -> [any SyncUpTarget]? {
        run.attempts.withLock { $0 = attempts }
        if attempts.beginRound() {
            return objects.map { GraphPass(graph: self, object: $0, mode: .breakCycle, attempts: attempts) }
        }
        return objects.map { GraphPass(graph: self, object: $0, mode: .writes, attempts: attempts) }
            + objects.map { GraphPass(graph: self, object: $0, mode: .deferred, attempts: attempts) }
            + objects.reversed().map { GraphPass(graph: self, object: $0, mode: .deletes, attempts: attempts) }
    }

    /// Its passes settle the journal, each its own soup.
    public var journalSoups: Set<String>? { [] }

    /// The graph's own records are sent by its passes.
    public func candidateIds(in store: SoupStore) async throws -> [Int64] { [] }

    public func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree] { [] }

    /// What the passes left: dirty records no pass took, because a reference still holds a
    /// `local_` id whose record was not created (or, in a dry run, not planned).
    public func strandedRecords(in store: SoupStore) async throws -> [SyncUpStrandedRecord] {
        let attempts = run.attempts.withLock { $0 }
        var dirty: [String: [JSONObject]] = [:]
        var holders: [String: String] = [:]
        for object in objects {
            dirty[object.soupName] = try await allDirty(in: object.soupName, store)
            for entry in dirty[object.soupName] ?? [] {
                if let id = entry[object.idFieldName]?.stringValue, SyncField.isLocalId(id) { holders[id] = object.soupName }
            }
        }
        var stranded: [SyncUpStrandedRecord] = []
        for object in objects {
            for entry in dirty[object.soupName] ?? [] where entry[SyncField.locallyDeleted]?.isTruthy != true {
                if let id = entry.soupEntryId, attempts?.isTaken(id, in: object.soupName) == true { continue }
                let waiting = GraphPass.localReferences(entry, object).first { attempts?.isPlanned($0.local) != true }
                guard let (field, local) = waiting else { continue }
                let reason = holders[local].map { "its \(field) is \(local), a \($0) record that was not created (see its own error); sent once it is" }
                    ?? "its \(field) is \(local), which no soup of this sync holds"
                stranded.append(SyncUpStrandedRecord(record: GraphPass.record(entry, object), reason: reason))
            }
        }
        return stranded
    }

    /// Every dirty entry of `soup`.
    func allDirty(in soup: String, _ store: SoupStore) async throws -> [JSONObject] {
        var entries: [JSONObject] = []
        var afterId: Int64 = 0
        while true {
            let page = try await store.dirtyEntries(in: soup, afterId: afterId, limit: 2000)
            guard let last = page.last?.soupEntryId else { return entries }
            entries += page
            afterId = last
        }
    }

    /// Objects ordered so that an object comes after those it references (self-references aside),
    /// and after the objects it names parents of by key (`Account.External_Id__c` in a field
    /// list), so the org finds the parents this sync creates when it resolves the keys.
    static func dependencyOrder(_ objects: [Object]) -> [Object] {
        // The soups each object waits for, worked out once.
        let parents = objects.map { $0.references.flatMap(\.soups) + $0.keyedParents(among: objects) }
        var ordered: [Object] = []
        var remaining = Array(objects.indices)
        while !remaining.isEmpty {
            let placed = Set(ordered.map(\.soupName))
            let inGraph = Set(remaining.map { objects[$0].soupName })
            let ready = remaining.firstIndex { index in
                parents[index].allSatisfy { $0 == objects[index].soupName || placed.contains($0) || !inGraph.contains($0) }
            } ?? 0
            ordered.append(objects[remaining.remove(at: ready)])
        }
        return ordered
    }
}

extension GraphSyncUpTarget {
    static let objectKeys: Set<String> = ["soupName", "sobjectType", "idFieldName", "modificationDateFieldName", "externalIdFieldName",
                                          "createFieldlist", "updateFieldlist", "references"]
    static let referenceKeys: Set<String> = ["field", "soup", "soups", "relationshipType"]

    /// The target a sync's `objects` describe; every problem is reported with its place.
    public init(sync: SyncDefinition, settings: StageSettings) throws {
        // A sync declared in `syncs` is reported at its own place; an inline one under the stage.
        func report(_ path: String, _ message: String) {
            if sync.path.isEmpty {
                settings.report("target.\(path)", message)
            } else {
                settings.report(nil, "\(sync.path).target.\(path): \(message)")
            }
        }
        guard let list = sync.target["objects"]?.arrayValue, !list.isEmpty else {
            report("objects", "a graph target needs \"objects\": one entry per soup, with its sobjectType and references")
            throw StageSettingsInvalid()
        }
        let declared = Set(list.compactMap { $0["soupName"]?.stringValue })
        var objects: [Object] = []
        var failed = false
        for (offset, value) in list.enumerated() {
            let path = "objects[\(offset)]"
            guard let json = value.objectValue, let soup = json["soupName"]?.stringValue, let type = json["sobjectType"]?.stringValue else {
                report(path, "needs \"soupName\" and \"sobjectType\"")
                failed = true
                continue
            }
            for key in json.keys where !Self.objectKeys.contains(key) { report("\(path).\(key)", "unknown key"); failed = true }
            guard let spec = settings.soups.first(where: { $0.name == soup }) else {
                report("\(path).soupName", "no soup named \"\(soup)\"")
                failed = true
                continue
            }
            var object = Object(soupName: soup, sobjectType: type)
            object.idFieldName = json["idFieldName"]?.stringValue ?? "Id"
            object.modificationDateFieldName = json["modificationDateFieldName"]?.stringValue ?? "LastModifiedDate"
            object.externalIdFieldName = json["externalIdFieldName"]?.stringValue
            object.createFieldlist = json["createFieldlist"]?.arrayValue?.compactMap(\.stringValue)
            object.updateFieldlist = json["updateFieldlist"]?.arrayValue?.compactMap(\.stringValue)
            for (index, reference) in (json["references"]?.arrayValue ?? []).enumerated() {
                let place = "\(path).references[\(index)]"
                guard let ref = reference.objectValue, let field = ref["field"]?.stringValue else {
                    report(place, "needs \"field\" and \"soup\" (or \"soups\" for a polymorphic lookup)")
                    failed = true
                    continue
                }
                for key in ref.keys where !Self.referenceKeys.contains(key) { report("\(place).\(key)", "unknown key"); failed = true }
                let soups = ref["soups"]?.arrayValue?.compactMap(\.stringValue) ?? ref["soup"]?.stringValue.map { [$0] } ?? []
                if soups.isEmpty { report(place, "needs \"soup\" (or \"soups\" for a polymorphic lookup)"); failed = true }
                // A soup of the pipeline outside the graph (SPEC §4b's Task.WhatId into opportunities):
                // its records' server ids pass as they are; a `local_` id of it never resolves, and
                // the record holding it fails with UNRESOLVED_REFERENCE.
                for target in soups where !declared.contains(target) && !settings.soups.contains(where: { $0.name == target }) {
                    report(place, "\"\(target)\" is neither one of this graph's soups (\(declared.sorted().joined(separator: ", "))) nor a soup of the pipeline")
                    failed = true
                }
                // Its values are looked up when a referenced record is created.
                if spec.index(forPath: field) == nil {
                    report("\(place).field", "\(soup) has no index on \"\(field)\"; add one so new ids can replace local ones")
                    failed = true
                }
                let relationship = RelationshipType(rawValue: ref["relationshipType"]?.stringValue ?? "LOOKUP") ?? .lookup
                object.references.append(Reference(field: field, soups: soups.filter(declared.contains), relationship: relationship))
            }
            objects.append(object)
        }
        if failed { throw StageSettingsInvalid() }
        self.init(objects: objects)
    }
}
