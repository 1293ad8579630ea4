import Connectors

extension OrgConfiguration.RemoteOrgSettings {
    /// The client settings of this org: what the pipeline file gives, the defaults of
    /// ``OrgConnectionSettings`` for the rest.
    public var connectionSettings: OrgConnectionSettings {
        typealias Defaults = OrgConnectionSettings
        return OrgConnectionSettings(
            instanceURL: instanceUrl, loginURL: loginUrl ?? Defaults.defaultLoginURL, apiVersion: apiVersion ?? Defaults.defaultAPIVersion,
            maxInFlight: maxInFlight ?? Defaults.defaultMaxInFlight, timeoutSeconds: timeoutSeconds ?? Defaults.defaultTimeoutSeconds,
            requestDeadlineSeconds: requestDeadlineSeconds ?? Defaults.defaultRequestDeadlineSeconds, headers: headers, auth: auth)
    }
}
