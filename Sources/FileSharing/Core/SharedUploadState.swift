/// Where the state of resumable uploads is kept for every server of a
/// folder (the shared database: SharedState's `PostgresUploadState`, given
/// in ``ShareConfiguration/SharedDatabase/uploads``): which uploads exist, their target, length
/// and conditions, who started them, how far they are, when they end, and
/// which server writes to one now. The bytes stay in the folder's staging
/// area, which every server reaches; this decides who may write them.
package protocol SharedUploadState: Sendable {
    /// Records a new upload, unless its owner or the folder has as many
    /// under way as `limits` allow (counted for every server at once).
    /// - Returns: The limit reached, when it is not recorded.
    /// - Throws: ``UploadStateError`` when it cannot be recorded.
    func register(_ upload: SharedUpload, limits: PendingUploadLimits) async throws(UploadStateError)
        -> PendingUploadLimitError?

    /// Claims `token` for this server's writing, for one request.
    /// - Returns: `.claimed`, `.busy` while another server (or request) writes
    ///   it, `.unknown` for an upload the database does not have.
    /// - Throws: ``UploadStateError`` when the database cannot be asked:
    ///   never a claim granted without it.
    func claim(_ token: String) async throws(UploadStateError) -> UploadClaim

    /// Ends this server's claim; `offset` is where the upload stands now.
    func release(_ token: String, offset: Int64) async

    /// Forgets an upload (finished, refused or cancelled).
    func remove(_ token: String) async

    /// Forgets the uploads whose time is over and no server writes; returns
    /// their tokens, for their staged bytes to be removed.
    func expire() async throws(UploadStateError) -> [String]
}

/// One resumable upload as the database keeps it.
package struct SharedUpload: Sendable, Equatable {
    package var token: String
    package var path: SharePath
    package var length: Int64
    /// The client's conditions on the file it replaces (`WritePreconditions.lines`).
    package var conditions: [String]
    /// Who started it: the user, or `[address]` for a client not signed in
    /// (``PendingUploads/owner(user:address:)``), as the limit per owner counts.
    package var owner: String

    /// Creates the record of an upload.
    package init(token: String, path: SharePath, length: Int64, conditions: [String], owner: String) {
        self.token = token
        self.path = path
        self.length = length
        self.conditions = conditions
        self.owner = owner
    }
}

/// The answer to ``SharedUploadState/claim(_:)``.
package enum UploadClaim: Sendable, Equatable {
    case claimed
    case busy
    case unknown
}

/// The uploads' shared state cannot be read or changed now. Knows no HTTP:
/// the faces answer 503 with ``message``.
package struct UploadStateError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package var description: String { message }

    /// Creates the error; `message` says why, for a person.
    package init(message: String) { self.message = message }
}
