// Preloaded into a Node server (NODE_OPTIONS=--require): a listen() given a port and no host binds 127.0.0.1
// instead of every interface, so tests expose nothing beyond the loopback interface.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
