import Soups

/// Where a sync up finds its records and how they map to org objects. The built-in targets are
/// ``SoupSyncUpTarget`` (one soup: Mobile Sync's REST, batch and collection targets) and
/// ``ParentChildrenSyncUpTarget``; conform a type to add another.
public protocol SyncUpTarget: Sendable {
    /// The transport to use when the stage's `strategy` is `auto` and Bulk does not apply.
    var preferredTransport: SyncUpTransport { get }

    /// `true` when trees have children (Bulk ingest does not apply then).
    var hasChildren: Bool { get }

    /// Fields of the target's soups that may hold another entry's `local_` id until the org
    /// creates that entry's record: when a lost create is found in the org, its new id replaces
    /// the `local_` id there too. Default: none.
    var references: [SyncUpReference] { get }

    /// `true` when every entry holding a tree's `local_` ids (``references``) belongs to that
    /// tree, so disjoint sets of trees can be sent and saved side by side. Default: `true` when
    /// there are no references.
    var treesAreIndependent: Bool { get }

    /// The `_soupEntryId`s of the trees to sync up (for a parent-children target, of the parents
    /// that are dirty or have a dirty child), in ascending order.
    func candidateIds(in store: SoupStore) async throws -> [Int64]

    /// Loads the trees of the given candidates, in the order given; ids no longer found are left out.
    func trees(for ids: [Int64], in store: SoupStore) async throws -> [SyncUpTree]

    /// Dirty records that no tree reaches, so they would never be sent (a child whose parent is
    /// not in the parent soup): reported as failed, so a run never calls itself a success while
    /// they wait. Default: none.
    func strandedRecords(in store: SoupStore) async throws -> [SyncUpStrandedRecord]

    /// ``candidateIds(in:)`` and ``strandedRecords(in:)`` together, for a target that finds both
    /// in one pass over the store (a sync up's first round asks for both). Default: one, then the other.
    func candidateIdsAndStranded(in store: SoupStore) async throws -> (candidateIds: [Int64], stranded: [SyncUpStrandedRecord])

    /// The field holding the server id in `soup`'s entries. Default `Id`.
    func idFieldName(inSoup soup: String) -> String

    /// The external id field `soup`'s records are upserted on, if any. Default none.
    func externalIdFieldName(inSoup soup: String) -> String?

    /// The field holding the org's modification date in `soup`'s entries. Default `LastModifiedDate`.
    func modificationDateFieldName(inSoup soup: String) -> String

    /// Mobile SDK's `isNewerThanServer`, for LEAVE_IF_CHANGED: `true` when the local record may
    /// overwrite the org's, whose modification date is `serverModificationDate` (epoch
    /// milliseconds; `nil` when the org gives none). A record the org no longer holds is a
    /// conflict before this is asked. Default: the local modification date is not older than the
    /// org's, or either is unknown.
    func isNewerThanServer(_ record: SyncUpRecord, serverModificationDate: Int64?) -> Bool

    /// A target made of passes (a graph of objects): the targets one round runs, in order; the
    /// stage runs rounds until one takes no new record from `attempts`, then runs this target once
    /// to report what no pass could send (``strandedRecords(in:)``). `nil` (the default): the
    /// target runs as itself.
    func passes(sharing attempts: SyncUpAttempts) -> [any SyncUpTarget]?

    /// The soups whose journal entries (writes of earlier attempts) this target settles before it
    /// sends; `nil` (the default) for all of the sync's. A pass settles its own soup's.
    var journalSoups: Set<String>? { get }
}

extension SyncUpTarget {
    public var references: [SyncUpReference] { [] }
    public var treesAreIndependent: Bool { references.isEmpty }
    public func strandedRecords(in store: SoupStore) async throws -> [SyncUpStrandedRecord] { [] }
    public func candidateIdsAndStranded(in store: SoupStore) async throws -> (candidateIds: [Int64], stranded: [SyncUpStrandedRecord]) {
        (try await candidateIds(in: store), try await strandedRecords(in: store))
    }
    public func idFieldName(inSoup soup: String) -> String { "Id" }
    public func externalIdFieldName(inSoup soup: String) -> String? { nil }
    public func modificationDateFieldName(inSoup soup: String) -> String { "LastModifiedDate" }

    public func passes(sharing attempts: SyncUpAttempts) -> [any SyncUpTarget]? { nil }
    public var journalSoups: Set<String>? { nil }

    public func isNewerThanServer(_ record: SyncUpRecord, serverModificationDate: Int64?) -> Bool {
        guard let server = serverModificationDate, let local = ServerTimestamp.milliseconds(record.entry[record.modificationDateField]) else {
            return true
        }
        return local >= server
    }
}

/// A field of `soup` that holds the id of an entry of `referencedSoup` (`ContactSoup.AccountId`
/// → `AccountSoup`), a `local_` id until that entry's record is created.
public struct SyncUpReference: Sendable, Equatable {
    public var soup: String
    public var field: String
    public var referencedSoup: String

    public init(soup: String, field: String, referencedSoup: String) {
        self.soup = soup
        self.field = field
        self.referencedSoup = referencedSoup
    }
}

/// A dirty record no tree of its target reaches, and why.
public struct SyncUpStrandedRecord: Sendable {
    public var record: SyncUpRecord
    public var reason: String

    public init(record: SyncUpRecord, reason: String) {
        self.record = record
        self.reason = reason
    }
}
