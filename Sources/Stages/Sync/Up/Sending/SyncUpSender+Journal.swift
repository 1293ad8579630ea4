import Connectors
import Foundation
import JSON
import Soups

/// Every write journaled, with the times that say when the org can no longer apply it, before
/// its request leaves.
extension SyncUpSender {
    /// How much later than its stamp a write may leave without a new stamp: settle-by times
    /// carry it as a margin, and an attempt leaving more than half of it late is stamped again.
    static let stampMarginMs: Int64 = 200

    /// How long after the client gave up a request may still reach the org: bytes written just
    /// before the timeout travel on (network latency, a busy server reading late), and the org's
    /// deadline runs from their arrival. Without it a create arriving a moment after the timeout
    /// could be applied after a reconciliation that found nothing had decided to send it again.
    static let arrivalSlackMs: Int64 = 2000

    /// From a write's stamp to when the org can no longer apply it: the client's timeout, the
    /// org's deadline, and both margins above.
    static func settlingMs(_ client: any OrgClient) -> Int64 {
        Int64(client.writeSettlingSeconds * 1000) + stampMarginMs + arrivalSlackMs
    }

    /// A write leaving now: when, on our clock and (as far as we can tell) the org's, and until
    /// when the org may still apply it.
    func sendTimes() async -> (sentAt: Int64, serverSentAt: Int64, settledBy: Int64) {
        let now = client.clock.now()
        let offset = await client.serverClockOffset()
        return (now, now + offset, now + Self.settlingMs(client))
    }

    /// Records a request's writes before it leaves: what is sent, when (on our clock and, as far
    /// as we can tell, the org's), until when the org may still apply it, and the parent a write
    /// refers to by reference within the request.
    /// Writes of a Bulk job carry its id (`bulkJobId`): a resumed run reads that job's results.
    func journal(_ operations: [SyncUpOperation], bulkJobId: String? = nil) async throws -> (ids: [RecordKey: Int64], sentAt: Int64) {
        guard !operations.isEmpty else { return ([:], client.clock.now()) }
        let times = await sendTimes()
        // Only writes linked to their parent need to find it among the others.
        let byKey = operations.contains { $0.journalLink != nil }
            ? Dictionary(operations.map { ($0.key, $0) }, uniquingKeysWith: { $1 }) : [:]
        let entries = operations.map { operation in
            var payload = operation.fields
            var link: SyncJournalEntry.Link?
            if let field = operation.journalLink, let parent = byKey[RecordKey(tree: operation.key.tree, child: nil)] {
                payload[field] = nil
                link = SyncJournalEntry.Link(field: field, soupName: parent.soup, entryId: parent.entryId)
            }
            return SyncJournalEntry(syncName: syncName, soupName: operation.soup, entryId: operation.entryId,
                                    operation: operation.kind.journalOperation, objectType: operation.objectType,
                                    recordId: operation.kind == .upsert ? operation.externalIdValue : operation.recordId,
                                    payload: payload, sentAt: times.sentAt, serverSentAt: times.serverSentAt, settledBy: times.settledBy,
                                    link: link, bulkJobId: bulkJobId)
        }
        let ids = try await store.journal.append(entries)
        return (Dictionary(zip(operations.lazy.map(\.key), ids), uniquingKeysWith: { $1 }), times.sentAt)
    }
}
