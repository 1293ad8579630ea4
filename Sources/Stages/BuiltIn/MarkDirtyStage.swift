import JSON
import SOQL
import Soups

/// `markDirty`: sets Mobile Sync's local flags on the entries of a soup chosen by `where` (a SOQL
/// condition over the entry's fields; all entries when absent), adding to the flags already set.
/// `as` is `created`, `updated`, `deleted`, or `auto`: no server id → created; data fields that
/// differ from what the org last confirmed → updated; otherwise left clean. An entry with a server
/// id and nothing confirmed yet counts as updated: its values cannot be shown to match the org's.
public struct MarkDirtyStage: Stage {
    public static let typeName = "markDirty"
    public static let countKeys = [StageCounts.read, StageCounts.created, StageCounts.updated, StageCounts.deleted, StageCounts.unchanged]

    enum Mode: String, CaseIterable {
        case created, updated, deleted, auto

        /// The flag every chosen entry takes; `nil` for `auto`, which decides per entry.
        var flag: String? {
            switch self {
            case .created: SyncField.locallyCreated
            case .updated: SyncField.locallyUpdated
            case .deleted: SyncField.locallyDeleted
            case .auto: nil
            }
        }
    }

    let soup: String
    let condition: SOQLCondition?
    let mode: Mode

    public init(settings: StageSettings) throws {
        soup = settings.soup("soup") ?? ""
        mode = Mode(rawValue: settings.choice("as", of: Mode.allCases.map(\.rawValue), default: "auto")) ?? .auto
        if let text = settings.soql("where") {
            do {
                condition = try SOQL.parseCondition(text)
            } catch {
                settings.report("where", "\(error.errorCode.rawValue) at row \(error.row), column \(error.column): \(error.detail)")
                condition = nil
            }
        } else {
            condition = nil
        }
    }

    /// The flag `as: auto` gives an entry: created without a server id; updated when its data
    /// fields differ from `confirmed` (what the org last confirmed, `nil`: nothing yet); else none.
    static func autoFlag(for entry: JSONObject, confirmed: JSONObject?) -> String? {
        let id = entry["Id"]?.stringValue ?? ""
        if id.isEmpty || SyncField.isLocalId(id) { return SyncField.locallyCreated }
        if let confirmed, confirmed.dataFields == entry.dataFields { return nil }
        return SyncField.locallyUpdated
    }

    /// Sets `flag` and `__local__` on `entry`, unless it is dirty with that flag already; returns
    /// whether it changed the entry.
    @discardableResult
    static func mark(_ entry: inout JSONObject, as flag: String) -> Bool {
        if entry[flag]?.isTruthy == true && entry.isDirty { return false }
        entry[flag] = .bool(true)
        entry[SyncField.local] = .bool(true)
        return true
    }

    /// Sets the flag `as: auto` gives `entry` (``autoFlag(for:confirmed:)``), as ``mark(_:as:)``.
    @discardableResult
    static func markAuto(_ entry: inout JSONObject, confirmed: JSONObject?) -> Bool {
        guard let flag = autoFlag(for: entry, confirmed: confirmed) else { return false }
        return mark(&entry, as: flag)
    }

    public func run(in context: StageContext) async throws -> StageResult {
        var result = StageResult()
        // Every entry, one flag: set in the store, without reading the entries.
        if condition == nil, let flag = mode.flag, let counts = try await context.store.flagAll(flag, in: soup) {
            let countKey = mode == .created ? StageCounts.created : mode == .deleted ? StageCounts.deleted : StageCounts.updated
            for (object, count) in counts.flagged.sorted(by: { $0.key < $1.key }) { result.add(countKey, count, object: object) }
            for (object, count) in counts.unchanged.sorted(by: { $0.key < $1.key }) { result.add(StageCounts.unchanged, count, object: object) }
            result.add(StageCounts.read, counts.flagged.values.reduce(0, +) + counts.unchanged.values.reduce(0, +))
            return result
        }
        let evaluator = SOQLEvaluator(nowMilliseconds: Timestamp.milliseconds(.now))
        var afterId: Int64 = 0
        // One page's write runs on the store's writer while the next page is read and flagged.
        var writing: PendingUpsert?
        while true {
            let page = try await context.store.entries(in: soup, afterId: afterId, limit: 2000)
            guard let last = page.last?.soupEntryId else { break }
            afterId = last
            let chosen = try page.filter { entry in try condition.map { try evaluator.matches($0, record: entry) } ?? true }
            result.add(StageCounts.read, chosen.count)
            let confirmed = mode == .auto ? try await context.store.confirmed(ids: chosen.compactMap(\.soupEntryId), in: soup) : [:]
            var changed: [JSONObject] = []
            for var entry in chosen {
                let object = entry["attributes"]?["type"]?.stringValue ?? soup
                let flag: String?
                switch mode {
                case .created, .updated, .deleted: flag = mode.flag
                case .auto: flag = Self.autoFlag(for: entry, confirmed: entry.soupEntryId.flatMap { confirmed[$0] })
                }
                guard let flag else {
                    result.add(StageCounts.unchanged, object: object)
                    continue
                }
                let countKey = flag == SyncField.locallyCreated ? StageCounts.created
                    : flag == SyncField.locallyDeleted ? StageCounts.deleted : StageCounts.updated
                guard Self.mark(&entry, as: flag) else {
                    result.add(StageCounts.unchanged, object: object)
                    continue
                }
                changed.append(entry)
                result.add(countKey, object: object)
            }
            let prepared = try await context.store.prepare(changed, for: soup)
            _ = try await writing?.value()
            writing = changed.isEmpty ? nil : context.store.startUpsert(prepared)
            if context.shouldStop { break }
        }
        _ = try await writing?.value()
        return result
    }
}
