#if os(Linux)
    import CFileshareShim

    extension FileIdentity {
        /// The identity of the item `name` of the open folder `directory`
        /// whose `lstat` is `status`; `name` is `nil` for the folder itself
        /// (the root), which has no name to ask its generation by.
        ///
        /// The one place an identity is read from the disk: the observer
        /// and a server naming an item the observer has not seen yet
        /// (``ItemID/init(identityOf:name:in:)``) must derive the same id.
        init(status: FileStatus, name: UnsafePointer<CChar>?, in directory: Int32) {
            var birth = status.born ?? 0
            if birth == 0, let name {
                // No birth time here: the inode generation tells a reused inode apart.
                let generation = cfs_generation_at(directory, name)
                if generation > 0 { birth = generation }
            }
            self.init(
                device: status.device, inode: status.inode, birth: birth,
                generation: name.map { cfs_handle_fingerprint_at(directory, $0) } ?? 0)
        }
    }

    extension ItemID {
        /// The id the observer gives an item it first finds at `name` in the
        /// open folder `directory`, with `status` its `lstat`, when no other
        /// item of the tree holds that id and no identity attribute gives
        /// another: for a server that must name an item the observer has not
        /// seen yet.
        public init(identityOf status: FileStatus, name: String, in directory: Int32) {
            let identity = name.withCString { FileIdentity(status: status, name: $0, in: directory) }
            self = ItemID.derived(from: identity, discriminator: 0)
        }
    }
#endif
