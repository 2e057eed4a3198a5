public import ChangeLog
import FileWatching

extension ShareConfiguration {
    /// The shared database several servers of one folder use (see the
    /// SharedState library): its change log, opened by whoever runs the
    /// server, and what `/api/info` says of it.
    public struct SharedDatabase: Sendable {
        /// The folder's change log in the database.
        public var changeLog: any ChangeLog
        /// The database's URL without credentials.
        public var description: String
        /// Whether this server leads the folder (runs its observer and writes its log).
        public var isLeader: @Sendable () -> Bool

        /// Creates the description of a shared database.
        public init(changeLog: any ChangeLog, description: String, isLeader: @escaping @Sendable () -> Bool) {
            self.changeLog = changeLog
            self.description = description
            self.isLeader = isLeader
        }
    }
}

extension ShareCore {
    /// `/api/info`'s `"database"` and `"leader"` members, with their leading
    /// comma: no database and the lead for a server on its own.
    var databaseInfo: String {
        guard let shared = sharedDatabase else { return ",\"database\":null,\"leader\":true" }
        return ",\"database\":\(JSONText.quoted(shared.description)),\"leader\":\(shared.isLeader())"
    }
}
