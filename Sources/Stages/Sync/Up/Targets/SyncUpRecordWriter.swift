import Connectors
import JSON

/// A sync-up target that writes each record itself, through Mobile SDK's `createOnServer`,
/// `updateOnServer` and `deleteOnServer`. Implement any of them; the others keep their default,
/// the REST API's create, update or delete of one record (as Mobile SDK's base target does).
///
/// Its records go one at a time per call (up to the stage's `maxInFlight` at once, parents
/// before their children), with the journal, reconciliation, result files and dry run of the
/// built-in targets: each write is journaled before the call, and a call whose outcome is unknown
/// is settled from the org before anything is sent again.
///
/// What a method throws decides the record's outcome:
/// - ``OrgAPIError`` (the org refused): the record fails with the org's error code;
/// - ``OrgClientError/uncertain(_:)`` (the write may have been applied — a lost answer): the
///   record is reconciled, never sent blind; the client's own requests throw it for you;
/// - anything else: the record fails with the error's description.
///
/// A record with an external id value is created through ``createOnServer(_:fields:org:)`` too,
/// its external id among the fields.
public protocol SyncUpRecordWriter: SyncUpTarget {
    /// Creates a record of `objectType` from `fields`; returns its id.
    func createOnServer(_ objectType: String, fields: JSONObject, org: any OrgClient) async throws -> String
    /// Updates record `id` of `objectType` with `fields`.
    func updateOnServer(_ objectType: String, id: String, fields: JSONObject, org: any OrgClient) async throws
    /// Deletes record `id` of `objectType`.
    func deleteOnServer(_ objectType: String, id: String, org: any OrgClient) async throws
}

extension SyncUpRecordWriter {
    public func createOnServer(_ objectType: String, fields: JSONObject, org: any OrgClient) async throws -> String {
        try await org.create(objectType, fields)
    }

    public func updateOnServer(_ objectType: String, id: String, fields: JSONObject, org: any OrgClient) async throws {
        try await org.update(objectType, id: id, fields)
    }

    public func deleteOnServer(_ objectType: String, id: String, org: any OrgClient) async throws {
        try await org.delete(objectType, id: id)
    }
}
