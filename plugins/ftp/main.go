// Command ftp is the file server connector: service "files" of the user's
// FTP, FTPS or SFTP server (the connection's URL says which, and its path
// is the base directory everything is relative to). It reaches the server
// through the host capability filetransfer, naming the connection; the
// host signs in, so the password or key never enters this plugin.
package main

import (
	"github.com/agenthost/agenthost/pdk/connector"
)

func main() {}

func init() {
	connector.Serve(map[string]connector.ServiceAdapter{"files": files{}})
}
