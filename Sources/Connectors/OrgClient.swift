/// The seam between stages and an org: everything org-facing goes through a type conforming to
/// `OrgClient`, so a user can put their own transport, auth or test double behind a pipeline.
///
/// The request methods (query, Composite, Collections, Bulk 2.0) join this protocol with the org
/// client itself; a run connects to its org only when a stage first asks for it.
public protocol OrgClient: Sendable {
    /// The org's instance URL, e.g. `https://example.my.salesforce.com`.
    var instanceURL: String { get }
}
