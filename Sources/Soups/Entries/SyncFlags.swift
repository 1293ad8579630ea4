import JSON

/// The Mobile Sync bookkeeping fields every synced soup entry carries.
public enum SyncField {
    public static let local = "__local__"
    public static let locallyCreated = "__locally_created__"
    public static let locallyUpdated = "__locally_updated__"
    public static let locallyDeleted = "__locally_deleted__"
    public static let syncId = "__sync_id__"
    public static let lastError = "__last_error__"
    /// Set on an entry whose record a LEAVE_IF_CHANGED sync up created, in place of a modification
    /// date read back: the local copy is the record as created, so the org's `LastModifiedDate`
    /// equals its `CreatedDate` until someone changes it there. Read only while the entry holds
    /// no modification date of its own.
    public static let asCreated = "__as_created__"
    public static let soupEntryId = "_soupEntryId"
    public static let soupLastModifiedDate = "_soupLastModifiedDate"
    public static let soupCreatedDate = "_soupCreatedDate"

    /// The four boolean flags, in the order Mobile Sync writes them.
    public static let flags = [local, locallyCreated, locallyUpdated, locallyDeleted]

    /// The prefix of ids given to locally created records.
    public static let localIdPrefix = "local_"

    /// `true` when `id` was made locally and has no server id yet.
    public static func isLocalId(_ id: String) -> Bool { id.hasPrefix(localIdPrefix) }

    /// The fields ``JSONObject/markClean()`` writes, with their values (for writers that set
    /// fields without an object, such as ``SoupPatch``).
    public static let cleanValues: [(name: String, value: JSONValue)] = flags.map { ($0, .bool(false)) } + [(lastError, .null)]

    /// The fields ``JSONObject/markAsCreated(dateField:)`` writes (`nil`: removed).
    public static func asCreatedValues(dateField: String) -> [(name: String, value: JSONValue?)] {
        [(dateField, nil), (asCreated, .bool(true))]
    }
}

extension JSONObject {
    /// Rewrites the four flags as JSON booleans, whatever shape the app wrote them in
    /// (`true`, `"true"`, `1`), and makes `__local__` true when any operation flag is.
    public mutating func normalizeSyncFlags() {
        var anyOperation = false
        for flag in SyncField.flags {
            guard let value = self[flag] else { continue }
            let truthy = value.isTruthy
            // Written only when not already a JSON boolean: no copy of a shared entry for nothing.
            if value != .bool(truthy) { self[flag] = .bool(truthy) }
            if truthy && flag != SyncField.local { anyOperation = true }
        }
        if anyOperation && self[SyncField.local] != .bool(true) { self[SyncField.local] = .bool(true) }
    }

    /// `true` when `__local__` is set, in any of its accepted shapes.
    public var isDirty: Bool { self[SyncField.local]?.isTruthy ?? false }

    /// Clears the four flags and `__last_error__`, as Mobile Sync's `cleanRecord` does.
    public mutating func markClean() {
        for (name, value) in SyncField.cleanValues { self[name] = value }
    }

    /// The entry a record from the org makes for the sync `syncId`: the record with `__sync_id__`,
    /// clean (what a sync down stores over whatever the record matches).
    public func synced(syncId: Int64) -> JSONObject {
        var entry = self
        // Room for the sync id, the flags, the error and the entry id: one allocation.
        entry.reserveCapacity(count + 8)
        entry[SyncField.syncId] = .integer(syncId)
        entry.markClean()
        return entry
    }

    /// Marks the entry as holding its record as created (``SyncField/asCreated``), dropping any
    /// modification date it held in `dateField`.
    public mutating func markAsCreated(dateField: String) {
        for (name, value) in SyncField.asCreatedValues(dateField: dateField) { self[name] = value }
    }

    /// `true` when the entry holds its record as created and no modification date of its own.
    public func isAsCreated(dateField: String) -> Bool {
        (self[SyncField.asCreated]?.isTruthy ?? false) && (self[dateField] ?? .null) == .null
    }

    /// The entry's `_soupEntryId`, when it has been stored.
    public var soupEntryId: Int64? { self[SyncField.soupEntryId]?.integerValue }
}
