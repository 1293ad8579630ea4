import Foundation
import Formats
import GRDB
import JSON

/// The emulated org: its schema, records, tokens, limits, faults and statistics. All requests go
/// through this actor, so changes are serialized as an org's would be within one record set.
actor OrgEngine {
    let seed: OrgSeed
    let store: RecordStore
    /// Finds records by their external id, unique and `idLookup` fields.
    let lookups: RecordLookups
    let validator: RecordValidator
    /// The 18-character org id.
    let orgId: String
    /// The token printed at start; always valid unless a session expiry fault revokes it.
    let developmentToken: String
    var instanceURL = "http://127.0.0.1"
    /// Whether `/emulator/*` answers without a token (the server listens on loopback only).
    var adminIsOpen = true
    /// The org's clock, shared with the server's channels (the `Date` header).
    nonisolated let clock: EmulatorClock
    /// The faults in force and their draws.
    var faults = FaultInjector()
    var stats = RequestStats()
    /// The access tokens issued and whose each is.
    var sessions: SessionRegistry
    var dailyRequests = 0
    /// Open query cursors (`nextRecordsUrl`).
    var cursors = QueryCursors()
    /// Bulk API 2.0 and 1.0 jobs.
    var jobs = BulkJobRegistry()
    /// A Composite, Graph or Tree request is running its subrequests (they cannot nest).
    var groupWriteOpen = false
    /// Records known to be live while a Collections create or update runs (it deletes nothing):
    /// the children of one parent check its id once, not once each. `nil` outside one.
    var liveIdsSeen: Set<String>?
    /// The last text ``timestamp(_:)`` wrote, and its time.
    var lastTimestamp: (milliseconds: Int64, text: String) = (.min, "")
    /// The user the request being handled runs as (`CreatedById` / `LastModifiedById`).
    var actingUserId: String?
    var userIds: [String: String] = [:]
    /// Requests held by a stall fault, resumed when the faults change.
    var stalled: [CheckedContinuation<Void, Never>] = []
    /// Requests under `/services` being handled now (held by latency or a stall included).
    var inFlight = 0
    /// Waiting in ``waitUntilIdle()``, resumed when the last request in flight ends.
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// How long a request may run before the org stops it (`REQUEST_RUNNING_TOO_LONG`) without
    /// applying it; clients can count on a write being applied within this long or never.
    let requestDeadline: Duration

    var schema: OrgSchema { seed.schema }

    init(seed: OrgSeed, databasePath: String?, accessToken: String?, requestDeadlineSeconds: Double = 30) throws {
        let organizationId = SalesforceId.make(prefix: "00D", counter: 1)
        let recordStore = try RecordStore(path: databasePath)
        lookups = try recordStore.queue.write { db in
            if try RecordStore.meta(db, "seedDigest") != seed.digest || seed.digest.isEmpty {
                try Self.loadSeed(seed, orgId: organizationId, db: db, now: EmulatorClock().now())
            }
            let lookups = try RecordLookups(db, indexing: seed.schema.objects.flatMap { object in
                object.fields.filter { ($0.unique || $0.externalId || $0.idLookup) && $0.name != "Id" }.map { (object.name, $0.name) }
            })
            // Not the owner, audit and record type fields (every record holds them; users and record types are not deleted).
            try RecordStore.indexReferenceFields(db, seed.schema.objects.flatMap { object in
                object.fields.filter { !$0.referenceTargets.allSatisfy { ["User", "Group", "RecordType"].contains($0) } }.map { (object.name, $0.name) }
            })
            return lookups
        }
        let token = accessToken ?? String(organizationId.prefix(15)) + "!" + Self.randomToken()
        self.seed = seed
        clock = EmulatorClock()
        store = recordStore
        validator = RecordValidator(schema: seed.schema)
        orgId = organizationId
        developmentToken = token
        requestDeadline = .milliseconds(Int64(requestDeadlineSeconds * 1000))
        sessions = SessionRegistry(developmentToken: token, username: seed.users.first?.username ?? "admin@emulator.local")
    }

    static func randomToken() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._")
        return String((0..<96).map { _ in alphabet.randomElement()! })
    }

    /// Wipes the records and loads the seed's: the Organization, one User per seed user, then the
    /// seed records with `{"$ref": key}` values resolved to the ids assigned.
    static func loadSeed(_ seed: OrgSeed, orgId: String, db: Database, now: Int64) throws {
        try RecordStore.wipe(db)
        let timestamp = JSONValue.string(SalesforceTime.format(now))
        var userIds: [String] = []
        for user in seed.users.isEmpty ? [OrgUser(username: "admin@emulator.local", password: "", clientId: "")] : seed.users {
            let id = try RecordStore.nextId(db, prefix: "005")
            userIds.append(id)
            var fields = systemValues(id: id, userId: id, timestamp: timestamp)
            fields["Username"] = .string(user.username)
            fields["Name"] = .string(user.username)
            fields["Email"] = .string(user.username)
            fields["Alias"] = .string(String(user.username.prefix { $0 != "@" }.prefix(8)))
            fields["IsActive"] = .bool(true)
            try RecordStore.save(db, StoredRecord(id: id, type: "User", fields: fields, isDeleted: false, systemModstamp: now))
        }
        var organization = systemValues(id: orgId, userId: userIds[0], timestamp: timestamp)
        organization["Name"] = .string(seed.orgName)
        organization["IsSandbox"] = .bool(seed.isSandbox)
        organization["OrganizationType"] = .string("Developer Edition")
        // What clients such as CumulusCI read from the Organization record.
        organization["InstanceName"] = .string(seed.isSandbox ? "CS1" : "NA1")
        organization["NamespacePrefix"] = .null
        organization["TrialExpirationDate"] = .null
        organization["LanguageLocaleKey"] = .string("en_US")
        organization["DefaultLocaleSidKey"] = .string("en_US")
        organization["TimeZoneSidKey"] = .string("GMT")
        organization["Country"] = .string("US")
        try RecordStore.save(db, StoredRecord(id: orgId, type: "Organization", fields: organization, isDeleted: false, systemModstamp: now))

        for object in seed.schema.objects {
            for recordType in object.recordTypes {
                var fields = systemValues(id: recordType.id, userId: userIds[0], timestamp: timestamp)
                fields["Name"] = .string(recordType.name)
                fields["DeveloperName"] = .string(recordType.developerName)
                fields["SobjectType"] = .string(object.name)
                fields["IsActive"] = .bool(true)
                fields["Description"] = .null
                fields["NamespacePrefix"] = .null
                try RecordStore.save(db, StoredRecord(id: recordType.id, type: "RecordType", fields: fields, isDeleted: false, systemModstamp: now))
            }
        }

        for object in seed.schema.objects where !object.tooling {
            let id = try RecordStore.nextId(db, prefix: "4ie")
            var fields = systemValues(id: id, userId: userIds[0], timestamp: timestamp)
            fields["DurableId"] = .string(object.name)
            fields["QualifiedApiName"] = .string(object.name)
            fields["DeveloperName"] = .string(object.custom ? String(object.name.dropLast(3)) : object.name)
            fields["Label"] = .string(object.label)
            fields["PluralLabel"] = .string(object.labelPlural)
            fields["KeyPrefix"] = .string(object.keyPrefix)
            fields["NamespacePrefix"] = .null
            fields["IsCustomizable"] = .bool(!Self.readOnlyObjects.contains(object.name))
            fields["IsQueryable"] = true
            fields["IsCustomSetting"] = false
            try RecordStore.save(db, StoredRecord(id: id, type: "EntityDefinition", fields: fields, isDeleted: false, systemModstamp: now))
        }

        var keys: [String: String] = [:]
        for record in seed.records {
            let object = seed.schema.object(record.type)!
            let id = try RecordStore.nextId(db, prefix: object.keyPrefix)
            var fields = systemValues(id: id, userId: userIds[0], timestamp: timestamp)
            for field in object.fields where fields[field.name] == nil {
                fields[field.name] = field.defaultValue ?? (field.type == .boolean ? .bool(false) : .null)
            }
            for (name, value) in record.fields {
                let field = object.field(name)!
                if let reference = value["$ref"]?.stringValue {
                    fields[field.name] = keys[reference].map(JSONValue.string) ?? .null
                } else {
                    fields[field.name] = (try? RecordValidator(schema: seed.schema).convert(value, field: field, object: object) { _ in true }) ?? value
                }
            }
            setOrgValues(&fields, object: object, ownerId: userIds[0])
            if let key = record.key { keys[key] = id }
            try RecordStore.save(db, StoredRecord(id: id, type: object.name, fields: fields, isDeleted: false, systemModstamp: now))
        }
        try RecordStore.setMeta(db, "seedDigest", seed.digest)
    }

    /// The fields ``systemValues(id:userId:timestamp:)`` sets.
    static let systemFieldNames: Set<String> = ["Id", "IsDeleted", "CreatedDate", "CreatedById", "LastModifiedDate", "LastModifiedById", "SystemModstamp"]

    /// Id, IsDeleted and the audit fields of a new record.
    static func systemValues(id: String, userId: String, timestamp: JSONValue) -> JSONObject {
        JSONObject(uniqueKeysWithValues: systemPairs(id: id, userId: userId, timestamp: timestamp))
    }

    /// ``systemValues(id:userId:timestamp:)`` as pairs, for a record built in one go.
    static func systemPairs(id: String, userId: String, timestamp: JSONValue) -> [(String, JSONValue)] {
        [("Id", .string(id)), ("IsDeleted", .bool(false)), ("CreatedDate", timestamp), ("CreatedById", .string(userId)),
         ("LastModifiedDate", timestamp), ("LastModifiedById", .string(userId)), ("SystemModstamp", timestamp)]
    }

    /// A record date's text for epoch milliseconds; the last one is kept, as the records of a
    /// load share their second (``EmulatorClock`` tells whole seconds).
    func timestamp(_ milliseconds: Int64) -> String {
        if lastTimestamp.milliseconds != milliseconds { lastTimestamp = (milliseconds, SalesforceTime.format(milliseconds)) }
        return lastTimestamp.text
    }

    /// The id of the user requests run as: the request's own user, else the seed's first.
    func currentUserId(_ db: Database) throws -> String {
        if let actingUserId { return actingUserId }
        return try String.fetchOne(db, sql: "SELECT id FROM records WHERE type = 'User' ORDER BY id LIMIT 1") ?? orgId
    }

    func setInstanceURL(_ url: String, loopback: Bool) {
        instanceURL = url
        adminIsOpen = loopback
    }

    /// Back to the seed: records, no faults, stats and the daily request counter zeroed.
    func reset() throws {
        try store.queue.write { db in try Self.loadSeed(seed, orgId: orgId, db: db, now: clock.now()) }
        faults = FaultInjector()
        stats = RequestStats()
        dailyRequests = 0
        sessions.restartExpiryCount()
        cursors.removeAll()
        jobs.removeAll()
        userIds = [:]
        releaseStalled()
    }

    func setFaults(_ settings: FaultSettings) {
        faults = FaultInjector(settings)
        sessions.restartExpiryCount()
        releaseStalled()
    }

    /// Counts a request under `/services` in flight until `finished` is called.
    func requestStarted() {
        inFlight += 1
    }

    func requestFinished() {
        inFlight -= 1
        guard inFlight == 0 else { return }
        let waiting = idleWaiters
        idleWaiters = []
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once no request under `/services` is being handled (one a stall holds never ends
    /// until the faults change).
    func waitUntilIdle() async {
        guard inFlight > 0 else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Holds the request being handled until the faults change (a stall fault).
    func stall() async {
        await withCheckedContinuation { stalled.append($0) }
    }

    private func releaseStalled() {
        let waiting = stalled
        stalled = []
        for continuation in waiting { continuation.resume() }
    }
}

/// Request counts for `/emulator/stats`.
struct RequestStats: Sendable {
    var total = 0
    var writes = 0
    var byKind: [String: Int] = [:]

    mutating func count(kind: String, isWrite: Bool) {
        total += 1
        byKind[kind, default: 0] += 1
        if isWrite { writes += 1 }
    }
}
