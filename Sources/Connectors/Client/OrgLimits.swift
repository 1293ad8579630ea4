/// Salesforce's per-request limits the client packs requests by.
public enum OrgLimits {
    /// The most records one sObject Collections request may hold.
    public static let collection = 200
    /// The most records one sObject Collections retrieve by request body may read.
    public static let retrieveByBody = 2000
    /// The most subrequests one Composite request may hold.
    public static let composite = 25
    /// The most sObject Collections or query subrequests one Composite request may hold.
    public static let heavySubrequests = 5
    /// The most nodes one Composite Graph request may hold.
    public static let graphNodes = 500
}
