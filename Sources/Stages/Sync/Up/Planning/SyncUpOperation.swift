import Connectors
import JSON
import Soups

/// Identifies a record within a page of trees: the tree's position and the child's (`nil` = parent).
struct RecordKey: Hashable, Sendable {
    var tree: Int
    var child: Int?

    /// One word hashed, not two and an optional's tag: a page keys several tables by record.
    func hash(into hasher: inout Hasher) { hasher.combine(tree << 20 | ((child ?? -1) + 1)) }

    /// A reference id unique within a request, usable in `@{ref.id}`.
    var referenceId: String { child.map { "t\(tree)c\($0)" } ?? "t\(tree)p" }
}

/// One write to send for one record.
struct SyncUpOperation: Sendable {
    enum Kind: String, Sendable {
        case create, upsert, update, delete

        var journalOperation: SyncJournalEntry.Operation {
            switch self {
            case .create: return .create
            case .upsert: return .upsert
            case .update: return .update
            case .delete: return .delete
            }
        }
    }

    var key: RecordKey
    var kind: Kind
    var objectType: String
    var soup: String
    var entryId: Int64
    /// The server id (update, delete).
    var recordId: String?
    var externalIdField: String?
    var externalIdValue: String?
    /// The fields sent, the parent link excepted.
    var fields: JSONObject
    /// For a child of a parent created in this sync: the field to fill with the parent's new id.
    var parentLink: (field: String, parent: RecordKey)?
    /// The field that refers to the parent by reference (`@{ref.id}`) within the request.
    var journalLink: String?

    /// The REST path of the record (from the API root, e.g. `/sobjects/Account/001…`).
    var restPath: String {
        let type = OrgPath.component(objectType)
        switch kind {
        case .create: return "/sobjects/\(type)"
        case .upsert: return "/sobjects/\(type)/\(OrgPath.component(externalIdField ?? ""))/\(OrgPath.component(externalIdValue ?? ""))"
        case .update, .delete: return "/sobjects/\(type)/\(OrgPath.component(recordId ?? ""))"
        }
    }

    var httpMethod: String {
        switch kind {
        case .create: return "POST"
        case .upsert, .update: return "PATCH"
        case .delete: return "DELETE"
        }
    }
}
