// Package editors holds ready-to-paste configurations that register mm as
// an ACP agent in each editor, one folder per client. It has no code:
// its tests read every configuration with a real parser for its language
// and start the command line it gives, which must answer ACP initialize.
package editors
