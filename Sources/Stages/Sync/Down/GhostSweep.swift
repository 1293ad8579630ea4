import Formats
import JSON
import Soups

/// Deletes, page by page, the clean entries a sync wrote that a predicate calls ghosts — the
/// sweep behind every target's ``SyncDownTarget/cleanGhosts(in:)``.
public enum GhostSweep {
    /// Removes the clean entries of `soup` written by sync `syncId` that `isGhost` picks, except
    /// those whose `idField` is in `sparing` (records a dirty entry refers to) and those `keeping`
    /// protects (given each page's candidates); returns `ghostsRemoved` for `object`.
    public static func remove(in store: SoupStore, soup: String, syncId: Int64, object: String,
                              sparing: Set<String> = [], idField: String = "Id",
                              keeping: @Sendable ([JSONObject]) async throws -> Set<Int64> = { _ in [] },
                              isGhost: @Sendable (JSONObject) -> Bool) async throws -> StageResult {
        try await sweep(store, soup: soup, syncId: syncId, object: object, sparing: sparing, idField: idField, reading: nil,
                        keeping: keeping) { entry, _ in isGhost(entry) }
    }

    /// ``remove(in:soup:syncId:object:sparing:idField:keeping:isGhost:)`` for ghosts told by their
    /// id alone (``SalesforceId/key(_:)``): each entry's id and sync flags are read, not the whole
    /// entry — the candidates `keeping` is given hold `_soupEntryId`, `idField` and the flags only.
    public static func remove(in store: SoupStore, soup: String, syncId: Int64, object: String,
                              sparing: Set<String> = [], idField: String = "Id",
                              keeping: @Sendable ([JSONObject]) async throws -> Set<Int64> = { _ in [] },
                              isGhostId: @Sendable (String) -> Bool) async throws -> StageResult {
        try await sweep(store, soup: soup, syncId: syncId, object: object, sparing: sparing, idField: idField,
                        reading: Set(SyncField.flags + [idField]), keeping: keeping) { _, id in isGhostId(id) }
    }

    private static func sweep(_ store: SoupStore, soup: String, syncId: Int64, object: String, sparing: Set<String>, idField: String,
                              reading keys: Set<String>?, keeping: @Sendable ([JSONObject]) async throws -> Set<Int64>,
                              isGhost: @Sendable (_ entry: JSONObject, _ id: String) -> Bool) async throws -> StageResult {
        var result = StageResult()
        result.add(StageCounts.ghostsRemoved, 0, object: object)
        var afterId: Int64 = 0
        while true {
            let page = try await store.entries(in: soup, afterId: afterId, limit: 2000, syncId: syncId, keeping: keys)
            guard let last = page.last?.soupEntryId else { return result }
            afterId = last
            let candidates = page.filter { entry in
                guard !entry.isDirty else { return false }
                let id = SalesforceId.key(entry[idField])
                return !sparing.contains(id) && isGhost(entry, id)
            }
            let protected = try await keeping(candidates)
            let ghosts = candidates.compactMap(\.soupEntryId).filter { !protected.contains($0) }
            try await store.delete(ids: ghosts, from: soup)
            result.add(StageCounts.ghostsRemoved, ghosts.count, object: object)
        }
    }
}
