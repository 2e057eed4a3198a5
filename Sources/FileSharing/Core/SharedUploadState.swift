/// Where the state of resumable uploads is kept for every server of a
/// folder (the shared database): which uploads exist, their target, length
/// and conditions, who started them, how far they are, when they end, and
/// which server writes to one now. The bytes stay in the folder's staging
/// area, which every server reaches; this decides who may write them.
protocol SharedUploadState: Sendable {
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
struct SharedUpload: Sendable, Equatable {
    var token: String
    var path: SharePath
    var length: Int64
    /// The client's conditions on the file it replaces (`WritePreconditions.lines`).
    var conditions: [String]
    /// Who started it: the user, or `[address]` for a client not signed in
    /// (``PendingUploads/owner(user:address:)``), as the limit per owner counts.
    var owner: String
}

/// The answer to ``SharedUploadState/claim(_:)``.
enum UploadClaim: Sendable, Equatable {
    case claimed
    case busy
    case unknown
}

/// The uploads' shared state cannot be read or changed now. Knows no HTTP:
/// the faces answer 503 with ``message``.
struct UploadStateError: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
}
