((block_mapping (_)) @setting)
