package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tollgate-dev/tollgate/api/v1alpha1"
	"github.com/tollgate-dev/tollgate/internal/appops"
)

func newAppConfirmDeletionCmd() *cobra.Command {
	o := appTarget{}
	cmd := &cobra.Command{
		Use:   "confirm-deletion NAME",
		Short: "Approve the deletion of an Application's Delete=confirm resources, like argocd app confirm-deletion",
		Long: `Approve, as of now, the deletion of the resources of the Application NAME
marked Delete=confirm (in their argocd.argoproj.io/sync-options annotation or
in the Application's syncOptions): set its annotation
` + v1alpha1.AnnotationKeyDeletionApproved + ` to the current time (RFC 3339).
While the Application is being deleted, the controller deletes nothing until
the annotation holds a time at or after the deletion's start; approving
before deleting does not count, as in Argo CD.

Exit status: 0 when the approval was recorded; 2 on usage errors or when
the Application does not exist.`,
		Example: `  tollgate app confirm-deletion billing --kubeconfig .tollgate/kubeconfig`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			at := time.Now().UTC()
			if err := confirmDeletion(cmd.Context(), c, o.key(), at); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %s: deletion approved at %s\n", o.name, at.Format(time.RFC3339))
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// confirmDeletion sets the deletion-approved annotation of the Application
// key to at with a merge patch.
func confirmDeletion(ctx context.Context, c client.Client, key types.NamespacedName, at time.Time) error {
	app, err := readApp(ctx, c, key)
	if err != nil {
		return err
	}
	base := app.DeepCopy()
	metav1.SetMetaDataAnnotation(&app.ObjectMeta, v1alpha1.AnnotationKeyDeletionApproved, at.UTC().Format(time.RFC3339))
	if err := appops.Patch(ctx, c, base, app, appops.PatchOptions{}); err != nil {
		return fmt.Errorf("approve deletion of %s: %w", key.Name, err)
	}
	return nil
}

func newAppTerminateOpCmd() *cobra.Command {
	o := appTarget{}
	cmd := &cobra.Command{
		Use:   "terminate-op NAME",
		Short: "Stop the operation of an Application, like argocd app terminate-op",
		Long: `Ask the controller to stop the operation of the Application NAME: set
status.operationState.phase to Terminating, as argocd app terminate-op does.
An operation waiting for its next retry or for a sync window ends at once
(Failed, "Operation terminated") and is cleared; a sync already applying a
wave finishes that reconcile and is not retried.

Exit status: 0 when the request was recorded; 2 on usage errors, when the
Application does not exist or has no operation in progress.`,
		Example: `  tollgate app terminate-op billing`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			c, _, err := newAppClient(o.kubeconfig)
			if err != nil {
				return err
			}
			if err := terminateOperation(cmd.Context(), c, o.key()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %s: operation termination requested\n", o.name)
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// terminateOperation sets the Application's operation state to
// Terminating; an Application without an operation is a usage error.
func terminateOperation(ctx context.Context, c client.Client, key types.NamespacedName) error {
	app, err := readApp(ctx, c, key)
	if err != nil {
		return err
	}
	if app.Operation == nil || app.Status.OperationState == nil {
		return usageError(fmt.Errorf("application %s has no operation in progress", key.Name))
	}
	return appops.Edit(ctx, c, app, "terminate the operation of", func(a *v1alpha1.Application) {
		a.Status.OperationState.Phase = v1alpha1.OperationTerminating
	})
}
