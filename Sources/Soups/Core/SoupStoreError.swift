/// Errors raised by the soup store. Messages name the soup, path or sync involved.
public enum SoupStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownSoup(String)
    case soupAlreadyExists(String)
    case invalidSoupSpec(String)
    case notIndexed(soup: String, path: String)
    case emptyExternalId(soup: String, path: String)
    case ambiguousExternalId(soup: String, path: String, value: String)
    case unknownEntry(soup: String, id: Int64)
    case notAnObject(soup: String)
    /// A record the org sent (``SyncedRecords``) is not valid JSON; `reason` places it in its page.
    case invalidRecord(soup: String, reason: String)
    case invalidSmartSQL(String)
    case unknownSync(String)
    case duplicateSync(String)
    case unknownDataset(String)
    case storeMissing(String)
    case readOnly(String)
    case storeLocked(String)
    case lockUnavailable(path: String, reason: String)
    /// The file was written by a newer release (it holds schema migrations this one does not know).
    case newerSchema(path: String, migrations: [String])
    /// A write queued behind one that failed (``SoupStore/startApply(_:after:)``): nothing written.
    case earlierWriteFailed

    public var description: String {
        switch self {
        case .unknownSoup(let name): return "no soup named \"\(name)\""
        case .soupAlreadyExists(let name): return "soup \"\(name)\" already exists"
        case .invalidSoupSpec(let message): return message
        case .notIndexed(let soup, let path): return "soup \"\(soup)\" does not have an index on \"\(path)\""
        case .emptyExternalId(let soup, let path):
            return "upsert into soup \"\(soup)\" with external id path \"\(path)\": the value cannot be empty"
        case .ambiguousExternalId(let soup, let path, let value):
            return "soup \"\(soup)\" has more than one entry where \(path) = \(value)"
        case .unknownEntry(let soup, let id): return "soup \"\(soup)\" has no entry with _soupEntryId \(id)"
        case .notAnObject(let soup): return "soup \"\(soup)\" entries must be JSON objects"
        case .invalidRecord(let soup, let reason): return "a record the org sent for soup \"\(soup)\" is not valid JSON (in its page, \(reason))"
        case .invalidSmartSQL(let message): return "invalid Smart SQL: \(message)"
        case .unknownSync(let name): return "sync \(name) does not exist"
        case .duplicateSync(let name): return "there is already a sync with name: \(name)"
        case .readOnly(let path): return "\(path): the store was opened for reading only"
        case .unknownDataset(let name): return "no dataset named \"\(name)\" in the store; run the stage that produces it first"
        case .storeMissing(let path): return "\(path): no store here (run a pipeline first)"
        case .storeLocked(let path): return "\(path): another run holds this store"
        case .lockUnavailable(let path, let reason): return "\(path): cannot open the lock file (\(reason))"
        case .newerSchema(let path, let migrations):
            return "\(path) was written by a newer SyncPipeline (schema \(migrations.joined(separator: ", "))); use that release or newer"
        case .earlierWriteFailed: return "not written: the write queued before it failed"
        }
    }
}
