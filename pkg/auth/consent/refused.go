package consent

// The reasons a sign-in is refused, as Config.Refused is told.
const (
	RefusedWrongPassphrase = "wrong_passphrase"
	RefusedLockedOut       = "locked_out"
)

// refuse tells Config.Refused of a refused sign-in.
func (c *Checker) refuse(reason string) {
	if c.refused != nil {
		c.refused(reason)
	}
}
