// Package shard splits the Applications of one control plane among the
// controller replicas that run, on Kubernetes itself (no other datastore).
//
// Each replica is a member: it holds a coordination.k8s.io Lease of its
// own, labelled with the group (the control-plane namespace it
// reconciles), and renews it every third of the lease duration. The live
// members are the Leases whose renewal this replica has seen within their
// duration, measured on its own clock from when it saw the renewal change,
// as client-go's leader election does: clocks of different machines are
// never compared.
//
// Every Application is owned by exactly one live member, chosen by
// rendezvous hashing of its namespace/name over the members' names: each
// member scores the key, the highest score owns it. A member that joins
// takes only the keys it now scores highest on, and a member that leaves
// gives only its own keys away; the rest stay where they are.
//
// A replica stops owning anything once its own renewal is overdue
// (Holding: within two thirds of the duration), a third of the duration
// before any other member may count it gone. The engine cancels the
// operations of a replica that is not Holding, so that a replica cut off
// from the API server has stopped applying before another one takes its
// Applications over; operations themselves are fenced on the Application
// (see the engine's AnnotationOperationReplica).
package shard
