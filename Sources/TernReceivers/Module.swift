// TernReceivers: placeholder until the receiver command sets land.
